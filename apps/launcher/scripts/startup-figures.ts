/**
 * Start-up time and resident memory of each service, run from its build and through tsx:
 *
 *   npm run build && node --import tsx apps/launcher/scripts/startup-figures.ts [runs]
 *
 * Starts a private redis-server, then each service alone, `runs` times each way (default 3):
 * start-up is from spawn until GET /livez answers 200 (the process serves HTTP), resident memory
 * is VmRSS 2 s later, idle. Prints a table of medians (docs/DEPLOY.md quotes it).
 */
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  httpStatus,
  requireBinaries,
  startNodeService,
  startRedisServer,
  waitFor,
} from '@agent-reach/process-kit';
import { entryOf } from '../src/entries.ts';

const SERVICES = [
  { name: 'registry-sync', portEnv: 'REGISTRY_PORT' },
  { name: 'router', portEnv: 'ROUTER_PORT' },
] as const;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

async function measure(entry: string, env: Record<string, string>, port: number) {
  const started = performance.now();
  const svc = await startNodeService({ name: 'measured', entry, env });
  await waitFor(async () => (await httpStatus(`http://127.0.0.1:${port}/livez`)) === 200, {
    timeoutMs: 60_000,
    intervalMs: 10,
    message: `${entry} answering /livez`,
  });
  const startupMs = performance.now() - started;
  await new Promise((r) => setTimeout(r, 2000));
  const rss = await rssMiB(svc.pid);
  const code = await svc.stop();
  if (code !== 0) throw new Error(`${entry} exited ${code} on SIGTERM:\n${svc.output()}`);
  return { startupMs, rss };
}

const runs = Number(process.argv[2] ?? 3);
const dir = await mkdtemp(join(tmpdir(), 'agent-reach-figures-'));
const redisPort = await freePort();
const redis = await startRedisServer({
  bin: requireBinaries(['redis-server'])['redis-server'],
  dir,
  port: redisPort,
});
const lines: string[] = [];
try {
  for (const s of SERVICES) {
    const source = entryOf(s.name);
    const built = source.replace(/\/src\/server\.ts$/, '/dist/server.js');
    for (const [how, entry] of [
      ['built', built],
      ['tsx', source],
    ] as const) {
      const results = [];
      for (let i = 0; i < runs; i++) {
        const port = await freePort();
        const env = {
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          REACH_PREFIX: `figures${i}`,
          LOG_LEVEL: 'warn',
          [s.portEnv]: String(port),
        };
        results.push(await measure(entry, env, port));
      }
      lines.push(
        `${s.name.padEnd(14)} ${how.padEnd(6)} start-up ${median(results.map((r) => r.startupMs))
          .toFixed(0)
          .padStart(5)} ms   RSS ${median(results.map((r) => r.rss))
          .toFixed(0)
          .padStart(4)} MiB   (median of ${runs})`,
      );
    }
  }
} finally {
  await redis.stop();
  await rm(dir, { recursive: true, force: true });
}
process.stdout.write(`${lines.join('\n')}\n`);
