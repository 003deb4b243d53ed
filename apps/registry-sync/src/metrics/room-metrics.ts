import { Counter, Gauge, type Registry } from 'prom-client';
import type { RoomStats, WaitingRoom } from '@agent-reach/dispatch';

/** A scrape reuses figures read this recently (the gauges share one read). */
const CACHE_MS = 1000;

/**
 * The waiting rooms' figures (docs/ROUTING.md, Waiting room), read from Redis at scrape time, per
 * capability and tenant: `reach_queue_waiting`, `reach_queue_oldest_wait_seconds`,
 * `reach_queue_arrivals_total`, `reach_queue_sent_total`, `reach_queue_wait_seconds{quantile}`
 * and `reach_queue_slot_share`. Every instance reports the same rooms: aggregate with `max`, not
 * `sum` (docs/DEPLOY.md, Autoscaling on the waiting room).
 */
export function registerRoomMetrics(registry: Registry, room: WaitingRoom): void {
  let cached: { at: number; stats: Promise<RoomStats[]> } | undefined;
  const read = (): Promise<RoomStats[]> => {
    const now = Date.now();
    if (!cached || now - cached.at > CACHE_MS) {
      cached = { at: now, stats: room.allStats(now).catch(() => []) };
    }
    return cached.stats;
  };
  const each = async (fill: (capability: string, t: RoomStats['tenants'][number]) => void) => {
    for (const q of await read()) for (const t of q.tenants) fill(q.capability, t);
  };
  const labelNames = ['capability', 'tenant'] as const;
  new Gauge({
    name: 'reach_queue_waiting',
    help: "Tasks waiting in a capability's waiting room, per tenant",
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      await each((capability, t) => this.set({ capability, tenant: t.tenant }, t.queued));
    },
  });
  new Gauge({
    name: 'reach_queue_oldest_wait_seconds',
    help: 'How long the oldest task waiting in the room has waited, per tenant',
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      await each((capability, t) =>
        this.set({ capability, tenant: t.tenant }, t.oldest_wait_ms / 1000),
      );
    },
  });
  // Counters kept in Redis: set from the stored totals at each scrape.
  new Counter({
    name: 'reach_queue_arrivals_total',
    help: 'Tasks that came into the waiting room, per tenant',
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      await each((capability, t) => this.inc({ capability, tenant: t.tenant }, t.arrived));
    },
  });
  new Counter({
    name: 'reach_queue_sent_total',
    help: 'Tasks sent from the waiting room to agents, per tenant',
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      await each((capability, t) => this.inc({ capability, tenant: t.tenant }, t.sent));
    },
  });
  new Gauge({
    name: 'reach_queue_wait_seconds',
    help: "Wait in the room of the tenant's tasks among the room's last 1,000 sent, by quantile",
    labelNames: [...labelNames, 'quantile'],
    registers: [registry],
    async collect() {
      this.reset();
      await each((capability, t) => {
        this.set({ capability, tenant: t.tenant, quantile: '0.5' }, t.wait_p50_ms / 1000);
        this.set({ capability, tenant: t.tenant, quantile: '0.99' }, t.wait_p99_ms / 1000);
      });
    },
  });
  new Gauge({
    name: 'reach_queue_slot_share',
    help: "The tenant's share of the room's last 1,000 sent tasks (0–1)",
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      await each((capability, t) => this.set({ capability, tenant: t.tenant }, t.share));
    },
  });
}
