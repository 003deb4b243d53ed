export * from './errors.ts';
export * from './error-handler.ts';
export * from './redis-errors.ts';
export * from './scripts.ts';
export * from './run-main.ts';
