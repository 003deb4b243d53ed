export { createRegistryService, type RegistryService } from './service.ts';
export { compileRegistryOptions, optionsFromEnv, type RegistryOptions } from './options.ts';
