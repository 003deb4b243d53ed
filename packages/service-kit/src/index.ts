export * from './errors.ts';
export * from './error-handler.ts';
export * from './redis-errors.ts';
export * from './scripts.ts';
export * from './run-main.ts';
export * from './trace-context.ts';
export * from './api-docs.ts';
export * from './metrics/index.ts';
