import { collectDefaultMetrics, Registry } from 'prom-client';
import { registerProcessGuardMetrics } from '../process-guard.ts';

/** Options of {@link createMetricsRegistry}. */
export interface MetricsRegistryOptions {
  /**
   * Also collect prom-client's process and Node.js metrics (CPU, memory, event-loop lag, GC).
   * @default true
   */
  defaultMetrics?: boolean;
}

/**
 * A Prometheus registry of one service instance, never prom-client's global one, so two
 * services in one process (in-process tests) keep their own counters. Every series carries
 * `service="<name>"`. It also shows the process guard's `reach_unhandled_rejections_total`, a
 * count for the whole process (`runMain`).
 */
export function createMetricsRegistry(
  service: string,
  opts: MetricsRegistryOptions = {},
): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  registerProcessGuardMetrics(registry);
  return registry;
}
