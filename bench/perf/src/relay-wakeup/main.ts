/**
 * Relay wake-up lab (issue 28, "Waking up on a Cluster"): how a relay that serves 1,000 endpoint
 * agents, each with its own hash-tagged inbox, learns that an inbox has an entry, on a single
 * Redis and on a 3-master Redis Cluster. Starts and stops its own Redis on 127.0.0.1.
 *
 *   node --import tsx bench/perf/src/relay-wakeup/main.ts [--idle-ms=10000]
 */
import { median, summarize } from '../stats.ts';
import { startFleet, type Fleet, type Leg } from './fleet.ts';
import { startRelay, type Candidate, type LabRelay } from './relays.ts';
import { formatTable, type Row } from './table.ts';

const AGENTS = 1000;
const WAKE_DELIVERIES = 200;
const WAKE_GAP_MS = 20; // ~50 deliveries a second
const CPU_DELIVERIES = 5000;
const CPU_BATCH = 50;
const COST_ROUNDS = 5;
const CANDIDATES: readonly Candidate[] = ['notify', 'spublish', 'poll-10ms', 'poll-50ms'];

const idleArg = process.argv.find((a) => a.startsWith('--idle-ms='));
const IDLE_MS = idleArg ? Number(idleArg.slice('--idle-ms='.length)) : 10_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Redis CPU over `ms` of no traffic, as a percentage of one core. */
async function idleCpuPct(fleet: Fleet, ms: number): Promise<number> {
  const before = await fleet.cpuSeconds();
  const t0 = performance.now();
  await sleep(ms);
  const spent = (await fleet.cpuSeconds()) - before;
  return (100 * spent * 1000) / (performance.now() - t0);
}

/** Redis CPU of `CPU_DELIVERIES` deliveries to random agents, µs per delivery. */
async function cpuPerDelivery(
  fleet: Fleet,
  publish: boolean,
  settled: () => boolean,
): Promise<number> {
  const before = await fleet.cpuSeconds();
  for (let sent = 0; sent < CPU_DELIVERIES; sent += CPU_BATCH) {
    await Promise.all(Array.from({ length: CPU_BATCH }, () => fleet.deliver(pick(fleet), publish)));
  }
  const deadline = Date.now() + 5000;
  while (!settled() && Date.now() < deadline) await sleep(5);
  return (((await fleet.cpuSeconds()) - before) * 1e6) / CPU_DELIVERIES;
}

/**
 * Redis CPU per delivery that the wake-up adds, µs: the median over {@link COST_ROUNDS} pairs of
 * runs without and with it, one after the other, with the relay subscribed but not reading.
 */
async function wakeCost(
  fleet: Fleet,
  relay: LabRelay,
  candidate: 'notify' | 'spublish',
): Promise<number> {
  relay.reading = false;
  const diffs: number[] = [];
  for (let round = 0; round < COST_ROUNDS; round++) {
    if (candidate === 'notify') await fleet.setNotify('');
    const without = await cpuPerDelivery(fleet, false, () => true);
    if (candidate === 'notify') await fleet.setNotify('Et');
    const target = relay.wakes + CPU_DELIVERIES;
    const withWake = await cpuPerDelivery(
      fleet,
      candidate === 'spublish',
      () => relay.wakes >= target,
    );
    if (relay.wakes < target)
      throw new Error(`${candidate}: ${target - relay.wakes} wakes missing`);
    diffs.push(withWake - without);
  }
  return median(diffs);
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms`);
    await sleep(20);
  }
}

function pick(fleet: Fleet) {
  return fleet.agents[Math.floor(Math.random() * fleet.agents.length)] as Fleet['agents'][number];
}

async function runLeg(leg: Leg): Promise<Row[]> {
  const fleet = await startFleet(leg, AGENTS);
  const rows: Row[] = [];
  try {
    const idle = await idleCpuPct(fleet, IDLE_MS);
    const none = await cpuPerDelivery(fleet, false, () => true);
    rows.push({ leg, candidate: 'none', connections: 0, idleCpuPct: idle, cpuUsPerDelivery: none });
    for (const candidate of CANDIDATES) {
      await fleet.skipUnread();
      const latencies: number[] = [];
      const relay = await startRelay(fleet, candidate, (sentAt) =>
        latencies.push(performance.now() - sentAt),
      );
      try {
        const connections = await fleet.relayConnections();
        const idleCpu = await idleCpuPct(fleet, IDLE_MS);
        const publish = candidate === 'spublish';
        for (let i = 0; i < WAKE_DELIVERIES; i++) {
          await fleet.deliver(pick(fleet), publish);
          await sleep(WAKE_GAP_MS);
        }
        const deadline = Date.now() + 3000;
        while (latencies.length < WAKE_DELIVERIES && Date.now() < deadline) await sleep(5);
        const wake = summarize(latencies);
        const extra =
          candidate === 'notify' || candidate === 'spublish'
            ? await wakeCost(fleet, relay, candidate)
            : NaN;
        rows.push({
          leg,
          candidate,
          connections,
          idleCpuPct: idleCpu,
          wakeP50Ms: wake.p50,
          wakeP99Ms: wake.p99,
          wakeMaxMs: wake.max,
          woken: `${latencies.length}/${WAKE_DELIVERIES}`,
          cpuUsPerDelivery: extra,
        });
      } finally {
        await relay.close();
        await until(async () => (await fleet.relayConnections()) === 0, 3000);
      }
      process.stderr.write(`${leg} ${candidate} done\n`);
    }
  } finally {
    await fleet.stop();
  }
  return rows;
}

async function main(): Promise<void> {
  const started = Date.now();
  const rows = [...(await runLeg('single')), ...(await runLeg('cluster'))];
  process.stdout.write(
    `relay wake-up: ${AGENTS} agents, ${WAKE_DELIVERIES} deliveries at ~${1000 / WAKE_GAP_MS}/s, ` +
      `idle window ${IDLE_MS / 1000} s\n` +
      `wake cost: median of ${COST_ROUNDS} pairs of ${CPU_DELIVERIES} deliveries without and with it\n\n`,
  );
  process.stdout.write(
    `${formatTable(rows)}\n\nran in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
