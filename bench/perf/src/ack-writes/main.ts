/**
 * What an agent's tick of acks costs the agent's own CPU: N `XADD`s and one `XACK`, sent as
 * ioredis' pipeline (the SDK's way before 2026-12-07) and as flat commands in one corked write
 * (`sendFlatAll`, what AckBatch sends on one server). Prints client CPU µs per ack entry, each
 * way, three interleaved rounds per batch size. Starts and stops its own Redis.
 *
 *   npm run bench:ack-writes -w @agent-reach/bench -- [--rounds=3000] [--sizes=2,16]
 */
import { sendFlatAll } from '@agent-reach/service-kit/redis';
import { startOwnRedis } from '@agent-reach/testkit';
import { Redis } from 'ioredis';

const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const ROUNDS = Number(arg('rounds', '3000'));
const SIZES = arg('sizes', '2,16').split(',').map(Number);
/** Nine fields, one a small result: about the size of an SDK agent's completion ack. */
const FIELDS = [
  'v',
  '1',
  'task_id',
  't-0123456789',
  'agent_id',
  'agent-0',
  'stage',
  'completed',
  'epoch',
  '3',
  'attempt',
  '1',
  'result',
  '{"ok":true}',
  'duration_ms',
  '0',
  'capability',
  'echo',
];

type Way = (redis: Redis, n: number) => Promise<unknown>;

const ids = (n: number) => Array.from({ length: n }, (_, i) => `1-${i}`);

const pipelined: Way = (redis, n) => {
  const p = redis.pipeline();
  for (let i = 0; i < n; i++) p.xadd('acks', '*', ...FIELDS);
  p.xack('inbox', 'g', ...ids(n));
  return p.exec();
};

const corked: Way = (redis, n) => {
  const commands: [string, string[]][] = [];
  for (let i = 0; i < n; i++) commands.push(['xadd', ['acks', '*', ...FIELDS]]);
  commands.push(['xack', ['inbox', 'g', ...ids(n)]]);
  return Promise.all(sendFlatAll(redis, commands));
};

/** Client CPU µs per ack entry over `ROUNDS` batches of `n`. */
async function measure(redis: Redis, way: Way, n: number): Promise<number> {
  for (let i = 0; i < 300; i++) await way(redis, n);
  await redis.del('acks');
  const before = process.cpuUsage();
  for (let i = 0; i < ROUNDS; i++) {
    await way(redis, n);
    if (i % 200 === 199) await redis.del('acks');
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / (ROUNDS * n);
}

async function main(): Promise<void> {
  const server = await startOwnRedis();
  // The SDK's command connection auto-pipelines (apps/worker-sdk/src/agent/redis-util.ts).
  const redis = new Redis(server.url, { enableAutoPipelining: true });
  try {
    await redis.xgroup('CREATE', 'inbox', 'g', '$', 'MKSTREAM');
    process.stdout.write('batch  round  pipeline µs/entry  corked µs/entry\n');
    for (const n of SIZES)
      for (let round = 1; round <= 3; round++) {
        const a = await measure(redis, pipelined, n);
        const b = await measure(redis, corked, n);
        const row = `${String(n).padStart(5)}  ${round}      ${a.toFixed(2).padStart(17)}`;
        process.stdout.write(`${row}  ${b.toFixed(2).padStart(15)}\n`);
      }
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

await main();
