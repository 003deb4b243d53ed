/**
 * `npm run bench -- --modes fairness` (issue 30): the noisy neighbour. On a fleet of S slots
 * running D-ms tasks, tenant B's wait at a steady rate alone, then beside tenant A flooding at
 * 100× B's rate over 1,000 fairness keys; Jain's index over 10 equal tenants all flooding; the
 * share of slots busy under backlog; and the same noisy neighbour on BullMQ's one FIFO queue.
 */
import { cpus, loadavg } from 'node:os';
import type { BenchOptions } from '../options.ts';
import type { Session } from '../session.ts';
import { runBullmqNoisy } from './bullmq-run.ts';
import { TenantClient } from './client.ts';
import { startFleet } from './fleet.ts';
import { Ledger } from './ledger.ts';
import { runB, runJain } from './reach-runs.ts';
import { fairnessReport, settingsLine } from './report.ts';
import { compileFairnessSettings } from './settings.ts';
import { startFairStack } from './stack.ts';

/** Capabilities of the runs: B alone and beside A share one fleet; the Jain run has its own. */
const NOISY_CAPABILITY = 'fair-noisy';
const JAIN_CAPABILITY = 'fair-jain';

/** Runs the fairness session on the session's Redis; prints the report and one JSON line. */
export async function runFairness(
  session: Session,
  opts: BenchOptions,
  out: (line: string) => void,
  log: (line: string) => void,
): Promise<number> {
  const s = compileFairnessSettings(opts);
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const { port, pid: redisPid } = session.ownRedis();
  const redisUrl = `redis://127.0.0.1:${port}`;
  const stack = await startFairStack(session.children, redisUrl, opts);
  log(`router ${stack.routerUrl}, registry-sync ${stack.registryUrl}`);
  const redis = { name: 'redis', pid: redisPid };
  const watched = [
    { name: 'router', pid: stack.router.pid },
    { name: 'registry-sync', pid: stack.registry.pid },
    redis,
  ];
  let ledger = new Ledger();
  const useLedger = (l: Ledger) => {
    ledger = l;
  };
  const client = async (tenant: string, capability: string) =>
    new TenantClient(tenant, stack.routerUrl, await stack.callerKey(tenant), capability);
  const fleetOf = (capability: string) =>
    startFleet(
      stack,
      { capability, agents: s.agents, slots: s.slotsPerAgent, taskMs: s.taskMs },
      () => ledger,
    );

  const noisyFleet = await fleetOf(NOISY_CAPABILITY);
  const b = await client('tenant-b', NOISY_CAPABILITY);
  const a = await client('tenant-a', NOISY_CAPABILITY);
  log('B alone');
  const alone = await runB(stack, s, NOISY_CAPABILITY, b, useLedger, watched);
  log(`B alone: p99 ${alone.b.p99.toFixed(1)} ms; B beside A's flood`);
  const noisy = await runB(stack, s, NOISY_CAPABILITY, b, useLedger, watched, a);
  log(`B beside A: p99 ${noisy.b.p99.toFixed(1)} ms; ${s.jainTenants} tenants flooding`);
  await noisyFleet.close();

  const jainFleet = await fleetOf(JAIN_CAPABILITY);
  const tenants = await Promise.all(
    Array.from({ length: s.jainTenants }, (_, i) => client(`tenant-j${i}`, JAIN_CAPABILITY)),
  );
  const jain = await runJain(stack, s, JAIN_CAPABILITY, tenants, useLedger, watched);
  await jainFleet.close();
  // BullMQ on a quiet machine: Agent-Reach's processes are stopped first.
  log('Agent-Reach stopped; the noisy neighbour on BullMQ');
  await session.children.stopAll();
  const bullmq = await runBullmqNoisy(redisUrl, s, [redis]);

  const { lines, json } = fairnessReport({ alone, noisy, jain, bullmq }, s);
  out(`Agent-Reach fairness (noisy neighbour), ${new Date().toISOString()}`);
  out(
    `machine: ${cpus().length} vCPUs (${cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}, load average at start ${load}`,
  );
  out(settingsLine(s));
  out('');
  for (const line of lines) out(line);
  out(JSON.stringify(json));
  return 0;
}
