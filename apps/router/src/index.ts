export { createRouterService, type RouterService } from './service.ts';
export { compileRouterOptions, optionsFromEnv, type RouterOptions } from './options.ts';
export { TenantRecords, type TenantRecordsOptions } from './tenants/tenant-records.ts';
