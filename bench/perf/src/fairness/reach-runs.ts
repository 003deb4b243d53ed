import { monoMs, sleep } from '../clock.ts';
import { startCpuProbe, type CpuFigures, type Watched } from './cpu-probe.ts';
import type { TenantClient, FairTask } from './client.ts';
import {
  answerFigures,
  busyShare,
  clumpedStarts,
  waitFigures,
  type WaitFigures,
  type Window,
} from './figures.ts';
import { Ledger } from './ledger.ts';
import { slotsOf, type FairnessSettings } from './settings.ts';
import type { FairStack } from './stack.ts';
import { startTicker, type Ticker } from './ticker.ts';

/** One tenant's row of `GET /v1/queues`. */
export interface RoomTenant {
  tenant: string;
  queued: number;
  sent: number;
  wait_p50_ms: number;
  wait_p99_ms: number;
  share: number;
}

/** The tenants of one capability's room, as `GET /v1/queues` has them; [] when it has no room. */
export async function roomTenants(stack: FairStack, capability: string): Promise<RoomTenant[]> {
  const body = (await stack.adminGet('/v1/queues')) as
    { queues?: { capability: string; tenants?: RoomTenant[] }[] } | undefined;
  return body?.queues?.find((q) => q.capability === capability)?.tenants ?? [];
}

/** What a run of tenant B (alone or beside the flood) measured. */
export interface BRun {
  /** B's waits, submit → an agent holds the task, of the tasks submitted in the window. */
  b: WaitFigures;
  window: Window;
  /** B's submit → the router's answer (202), ms: how much of the wait is the request itself. */
  answer: { p50: number; p99: number };
  /** Share of the slots busy in the window. */
  busy: number;
  /** Share of the task starts in the window within 2 ms of the one before. */
  clumped: number;
  /** The flooding tenant's client (outcomes), when it flooded. */
  flood?: TenantClient;
  /** Flood ticks skipped because two batches were still unanswered. */
  floodSkipped: number;
  /** The room's own view at the window's end. */
  room: RoomTenant[];
  /** CPU of the services, Redis and the bench process over the window. */
  cpu: CpuFigures;
}

/** The batches a flooding tenant sends each tick: `perTick` tasks, over `keys` fairness keys. */
export function floodBatch(
  tenant: string,
  tick: number,
  perTick: number,
  keys: number,
): FairTask[] {
  return Array.from({ length: perTick }, (_, j) => {
    const n = tick * perTick + j;
    return {
      payload: { t: tenant, i: `${tenant}-${n}` },
      ...(keys > 0 ? { fairnessKey: `user-${n % keys}` } : {}),
    };
  });
}

/** Starts a tenant's flood of `ratePerS`, one batch a tick, two batches in flight at most. */
export function startFlood(
  client: TenantClient,
  s: FairnessSettings,
  ratePerS: number,
  keys: number,
): Ticker {
  const perTick = Math.max(1, Math.round((ratePerS * s.tickMs) / 1000));
  return startTicker(
    s.tickMs,
    (n) => client.submitBatch(floodBatch(client.tenant, n, perTick, keys)),
    2,
  );
}

/**
 * Tenant B at its steady rate, with tenant A flooding beside it when `flood` is given: warm-up,
 * the measured window, then B stops and A goes on (the fleet stays saturated) until B's last
 * tasks are received or the grace runs out.
 */
export async function runB(
  stack: FairStack,
  s: FairnessSettings,
  capability: string,
  b: TenantClient,
  useLedger: (l: Ledger) => void,
  watched: readonly Watched[],
  flood?: TenantClient,
): Promise<BRun> {
  const ledger = new Ledger();
  useLedger(ledger);
  const floodTicker = flood
    ? startFlood(flood, s, s.bRatePerS * s.floodFactor, s.floodKeys)
    : undefined;
  const steady = startTicker(1000 / s.bRatePerS, (n, at) => {
    const id = `b-${n}`;
    ledger.submitted(id, at);
    return b.submit({ payload: { t: b.tenant, i: id } }).then(() => ledger.answered(id, monoMs()));
  });
  await sleep(s.warmupMs);
  const probe = startCpuProbe(watched);
  const fromMs = monoMs();
  await sleep(s.windowMs);
  const toMs = monoMs();
  const cpu = probe.stop();
  const room = flood ? await roomTenants(stack, capability) : [];
  await steady.stop();
  // The runs overlapping the window end at most one task after it.
  await sleep(s.taskMs + 50);
  const graceEnd = monoMs() + s.graceMs;
  while (!ledger.allReceived(toMs) && monoMs() < graceEnd) await sleep(50);
  const endMs = monoMs();
  await floodTicker?.stop();
  const window = { fromMs, toMs };
  return {
    b: waitFigures(ledger.tracked.values(), window, endMs),
    answer: answerFigures(ledger.tracked.values(), window),
    window,
    busy: busyShare(ledger.runs, window, slotsOf(s)),
    clumped: clumpedStarts(ledger.runs, window, 2),
    ...(flood ? { flood } : {}),
    floodSkipped: floodTicker?.skipped ?? 0,
    room,
    cpu,
  };
}

/** What the run of equal tenants all flooding measured. */
export interface JainRun {
  tenants: string[];
  /** Tasks each tenant's were received in the window. */
  served: number[];
  busy: number;
  /** Tenants with tasks waiting at the window's start and at its end (all: backlogged throughout). */
  backloggedAtStart: number;
  backloggedAtEnd: number;
  cpu: CpuFigures;
}

/**
 * `clients` (equal weights) each flood at A's rate ÷ their number: warm-up until every backlog
 * builds, then the window, counting the tasks each tenant's agents received.
 */
export async function runJain(
  stack: FairStack,
  s: FairnessSettings,
  capability: string,
  clients: readonly TenantClient[],
  useLedger: (l: Ledger) => void,
  watched: readonly Watched[],
): Promise<JainRun> {
  const ledger = new Ledger();
  useLedger(ledger);
  const rate = (s.bRatePerS * s.floodFactor) / clients.length;
  const floods = clients.map((c) => startFlood(c, s, rate, 0));
  const backlogged = async () =>
    (await roomTenants(stack, capability)).filter((t) => t.queued > 0).length;
  await sleep(s.warmupMs);
  const atStart = await backlogged();
  const probe = startCpuProbe(watched);
  const fromMs = monoMs();
  await sleep(s.jainWindowMs);
  const toMs = monoMs();
  const cpu = probe.stop();
  const atEnd = await backlogged();
  await sleep(s.taskMs + 50);
  await Promise.all(floods.map((f) => f.stop()));
  const tenants = clients.map((c) => c.tenant);
  return {
    tenants,
    served: ledger.receivedBy(tenants, fromMs, toMs),
    busy: busyShare(ledger.runs, { fromMs, toMs }, slotsOf(s)),
    backloggedAtStart: atStart,
    backloggedAtEnd: atEnd,
    cpu,
  };
}
