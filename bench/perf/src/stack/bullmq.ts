import type { BenchOptions } from '../options.ts';
import type { ChildSet } from '../proc/children.ts';
import { spawnListening } from './ports.ts';
import { entry, type RunningSystem } from './running.ts';

/** Starts the BullMQ workers, the http-mode gateway and a caller process. */
export async function startBullmq(
  children: ChildSet,
  redisUrl: string,
  opts: BenchOptions,
): Promise<RunningSystem> {
  const echo = opts.verbose;
  const workers = await Promise.all(
    Array.from({ length: opts.workers }, (_, i) =>
      children.spawnNode({
        name: `bullmq-worker-${i}`,
        role: 'workers',
        entry: entry('bullmq/worker.ts'),
        env: { REDIS_URL: redisUrl, CONCURRENCY: String(opts.concurrency) },
        ipc: true,
        echo,
      }),
    ),
  );
  // Ready once it listens; started again on another port if its own was taken.
  const { port: gatewayPort, child: gateway } = await spawnListening(
    children,
    {
      name: 'bullmq-gateway',
      role: 'front',
      entry: entry('bullmq/gateway.ts'),
      env: { REDIS_URL: redisUrl },
      ipc: true,
      echo,
    },
    'GATEWAY_PORT',
    (child) => child.next((m) => m.type === 'ready', 30_000, 'ready'),
  );
  const caller = await children.spawnNode({
    name: 'bullmq-caller',
    role: 'caller',
    entry: entry('bullmq/caller.ts'),
    env: {
      REDIS_URL: redisUrl,
      GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
      HTTP_CONNECTIONS: String(opts.httpConnections),
    },
    ipc: true,
    echo,
  });
  await Promise.all(
    [...workers, caller].map((c) => c.next((m) => m.type === 'ready', 30_000, 'ready')),
  );
  return {
    name: 'bullmq',
    caller,
    processes: [caller, gateway, ...workers],
    httpOnly: [gateway],
    betweenRuns: () => Promise.resolve(),
    awake: () => Promise.resolve(),
  };
}
