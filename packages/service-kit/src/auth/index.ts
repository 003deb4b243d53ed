export * from './principal.ts';
export * from './key-format.ts';
export * from './key-store.ts';
export * from './auth-mode.ts';
export * from './auth-hook.ts';
export * from './failure-limiter.ts';
