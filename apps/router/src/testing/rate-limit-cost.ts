/**
 * The router's CPU per request spent on the per-key request-rate quota (docs/SECURITY.md,
 * Quotas): a router in process with keys required, on a Redis of its own, answers GET
 * /v1/tasks/:id (404, one Redis round trip) for a key without a rate quota and for one with a
 * quota it never reaches, in interleaved runs; the router process's CPU time per request is
 * printed for each run, with the medians. Run from apps/router:
 *
 *   node --import tsx src/testing/rate-limit-cost.ts            # N=20000 requests a run, 5 runs each
 */
import { spawn } from 'node:child_process';
import pino from 'pino';
import { createRouterService } from '../index.ts';

const N = Number(process.env['N'] ?? 20_000);
const RUNS = Number(process.env['RUNS'] ?? 5);
const CONCURRENCY = 64;
const ADMIN = 'rate-limit-cost-admin-key-0123456789-abcdef';

const port = 20_000 + Math.floor(Math.random() * 20_000);
const redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
  stdio: 'ignore',
});
await new Promise((r) => setTimeout(r, 500));
const router = await createRouterService(
  { redisUrl: `redis://127.0.0.1:${port}`, prefix: 'cost', auth: 'required', adminKey: ADMIN },
  { logger: pino({ level: 'silent' }) },
);

async function makeKey(ratePerS: number): Promise<string> {
  const res = await router.app.inject({
    method: 'POST',
    url: '/v1/keys',
    headers: { authorization: `Bearer ${ADMIN}` },
    payload: { tenant: 'acme', role: 'caller', rate_per_s: ratePerS },
  });
  if (res.statusCode !== 201) throw new Error(`key: ${res.statusCode} ${res.body}`);
  return res.json<{ key: string }>().key;
}

/** CPU µs of this process per request, for `N` requests with `key`. */
async function run(key: string): Promise<number> {
  const headers = { authorization: `Bearer ${key}` };
  let sent = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent++ < N) {
        const res = await router.app.inject({ url: '/v1/tasks/nope', headers });
        if (res.statusCode !== 404) throw new Error(`unexpected ${res.statusCode}`);
      }
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / N;
}

const unlimited = await makeKey(0);
const limited = await makeKey(1_000_000);
await run(unlimited);
await run(limited);
const without: number[] = [];
const withQuota: number[] = [];
for (let i = 0; i < RUNS; i++) {
  without.push(await run(unlimited));
  withQuota.push(await run(limited));
}
// The quota's Redis side: one script call (INCR, and PEXPIRE or PTTL) per request.
const stats = /cmdstat_evalsha:calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/.exec(
  await router.redis.info('commandstats'),
);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const round = (x: number) => Number(x.toFixed(1));
process.stdout.write(
  `${JSON.stringify({
    requests_per_run: N,
    concurrency: CONCURRENCY,
    without_quota_us: without.map(round),
    with_quota_us: withQuota.map(round),
    median_without_us: round(median(without)),
    median_with_us: round(median(withQuota)),
    redis_script_calls: Number(stats?.[1] ?? 0),
    redis_us_per_script_call: Number(stats?.[3] ?? 0),
  })}\n`,
);
await router.close();
redis.kill();
