export { createRouterService, type RouterService } from './service.ts';
export { compileRouterOptions, optionsFromEnv, type RouterOptions } from './options.ts';
export { TenantRecords, type TenantRecordsOptions } from './tenants/tenant-records.ts';
export { TaskSearch, type TaskSearchOptions } from './search/task-search.ts';
export { RedisTaskSearch, type RedisSearchOptions } from './search/redis-search.ts';
export { TenantScope } from './tasks/tenant-scope.ts';
