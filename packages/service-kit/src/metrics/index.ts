export { createMetricsRegistry, type MetricsRegistryOptions } from './registry.ts';
export { installHttpMetrics, installMetricsEndpoint, METRICS_PATH, routeLabel } from './http.ts';
export {
  observeTaskEvents,
  registerEventSinkMetrics,
  STAGE_LATENCY_BUCKETS,
  type TaskEventObserverOptions,
} from './task-events.ts';
export { registerFleetGauges, type FleetGaugeOptions, type FleetSample } from './fleet.ts';
export { registerRedisErrorCounter, type ErrorEmitter } from './redis-errors.ts';
