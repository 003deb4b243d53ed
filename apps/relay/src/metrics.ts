import { createMetricsRegistry } from '@agent-reach/service-kit';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** A relay's metrics (docs/ENDPOINTS.md, Operating a relay). */
export interface RelayMetrics {
  registry: Registry;
  /** Calls to endpoints by protocol and outcome (`completed`, or the failure code). */
  calls: Counter<'protocol' | 'outcome'>;
  callSeconds: Histogram<'protocol'>;
  /** Inbox entries that were not tasks: acknowledged and skipped. */
  malformed: Counter;
  /** Endpoint agents this relay serves, and those of them not answering. */
  served: Gauge;
  unreachable: Gauge;
  /** Live relays as this one last read them. */
  relays: Gauge;
  /** Liveness checks by kind (`tcp`, `full`) and result. */
  probes: Counter<'kind' | 'result'>;
}

/** A new metrics registry for one relay. */
export function createRelayMetrics(): RelayMetrics {
  const registry = createMetricsRegistry('relay');
  const r = [registry];
  return {
    registry,
    calls: new Counter({
      name: 'reach_relay_calls_total',
      help: 'Calls to endpoint agents by protocol and outcome',
      labelNames: ['protocol', 'outcome'],
      registers: r,
    }),
    callSeconds: new Histogram({
      name: 'reach_relay_call_seconds',
      help: 'Time from receipt to the endpoint’s answer',
      labelNames: ['protocol'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers: r,
    }),
    malformed: new Counter({
      name: 'reach_relay_malformed_entries_total',
      help: 'Inbox entries that were not tasks: acknowledged and skipped',
      registers: r,
    }),
    served: new Gauge({
      name: 'reach_relay_agents_served',
      help: 'Endpoint agents this relay serves',
      registers: r,
    }),
    unreachable: new Gauge({
      name: 'reach_relay_agents_unreachable',
      help: 'Served endpoint agents that did not answer their last check or call',
      registers: r,
    }),
    relays: new Gauge({
      name: 'reach_relay_members',
      help: 'Live relays as this relay last read them',
      registers: r,
    }),
    probes: new Counter({
      name: 'reach_relay_probes_total',
      help: 'Liveness checks of endpoint agents by kind and result',
      labelNames: ['kind', 'result'],
      registers: r,
    }),
  };
}
