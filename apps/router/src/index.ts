export { createRouterService, type RouterService } from './service.ts';
export { compileRouterOptions, optionsFromEnv, type RouterOptions } from './options.ts';
