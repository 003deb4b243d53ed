import { Queue, Worker } from 'bullmq';
import { monoMs, sleep } from '../clock.ts';
import { startCpuProbe, type CpuFigures, type Watched } from './cpu-probe.ts';
import { CALLER_QUEUE_OPTIONS } from '../systems/bullmq/shared.ts';
import { busyShare, waitFigures, type WaitFigures, type Window } from './figures.ts';
import type { FairPayload } from './fleet.ts';
import { Ledger } from './ledger.ts';
import { floodBatch } from './reach-runs.ts';
import { slotsOf, type FairnessSettings } from './settings.ts';
import { startTicker } from './ticker.ts';

/** What the noisy neighbour measured on BullMQ. */
export interface BullmqRun {
  b: WaitFigures;
  window: Window;
  busy: number;
  /** A's jobs added, and the jobs waiting at the window's end. */
  floodAdded: number;
  waitingAtEnd: number;
  cpu: CpuFigures;
}

/**
 * The noisy neighbour on open-source BullMQ: one FIFO queue, as BullMQ offers (its group
 * rate-limiting and fair groups are BullMQ Pro), A's flood and B's steady jobs into it, workers
 * of `agents` × `slotsPerAgent` concurrency in all running `taskMs` jobs. A's client adds nothing
 * while `bullmqBacklog` jobs wait, so A's backlog is held to the room's per-tenant bound.
 */
export async function runBullmqNoisy(
  redisUrl: string,
  s: FairnessSettings,
  watched: readonly Watched[],
): Promise<BullmqRun> {
  const url = new URL(redisUrl);
  const connection = { host: url.hostname, port: Number(url.port || 6379) };
  const name = 'bench-fair';
  const ledger = new Ledger();
  const queue = new Queue<FairPayload>(name, { ...CALLER_QUEUE_OPTIONS, connection });
  const workers = Array.from(
    { length: s.agents },
    () =>
      new Worker<FairPayload>(
        name,
        async (job) => {
          const startMs = monoMs();
          ledger.received(job.data.t, job.data.i, startMs);
          await sleep(s.taskMs);
          ledger.ran(startMs, monoMs());
        },
        { connection, concurrency: s.slotsPerAgent },
      ),
  );
  for (const w of workers)
    w.on('error', (err) => process.stderr.write(`bullmq worker: ${err.message}\n`));
  await Promise.all([queue.waitUntilReady(), ...workers.map((w) => w.waitUntilReady())]);
  const perTick = Math.round((s.bRatePerS * s.floodFactor * s.tickMs) / 1000);
  let floodAdded = 0;
  const flood = startTicker(
    s.tickMs,
    async (n) => {
      if ((await queue.getWaitingCount()) >= s.bullmqBacklog) return;
      const batch = floodBatch('a', n, perTick, 0);
      await queue.addBulk(batch.map((t) => ({ name: 'a', data: t.payload })));
      floodAdded += batch.length;
    },
    2,
  );
  const steady = startTicker(1000 / s.bRatePerS, async (n, at) => {
    const id = `b-${n}`;
    ledger.submitted(id, at);
    await queue.add('b', { t: 'b', i: id });
  });
  try {
    await sleep(s.warmupMs);
    const probe = startCpuProbe(watched);
    const fromMs = monoMs();
    await sleep(s.windowMs);
    const toMs = monoMs();
    const cpu = probe.stop();
    await steady.stop();
    await sleep(s.taskMs + 50);
    const graceEnd = monoMs() + s.graceMs;
    while (!ledger.allReceived(toMs) && monoMs() < graceEnd) await sleep(50);
    const endMs = monoMs();
    await flood.stop();
    const window = { fromMs, toMs };
    return {
      b: waitFigures(ledger.tracked.values(), window, endMs),
      window,
      busy: busyShare(ledger.runs, window, slotsOf(s)),
      floodAdded,
      waitingAtEnd: await queue.getWaitingCount(),
      cpu,
    };
  } finally {
    await Promise.allSettled([steady.stop(), flood.stop()]);
    // Force: the backlog is abandoned, and the session's Redis goes with the session.
    await Promise.allSettled(workers.map((w) => w.close(true)));
    await queue.close();
  }
}
