import type { Redis } from 'ioredis';
import type { BenchOptions } from '../options.ts';
import type { ChildSet } from '../proc/children.ts';
import { FLOOR } from '../systems/floor/shared.ts';
import { spawnListening } from './ports.ts';
import { entry, type RunningSystem } from './running.ts';

/** Starts the floor's consumers, its http-mode gateway and a caller process. */
export async function startFloor(
  children: ChildSet,
  admin: Redis,
  redisUrl: string,
  opts: BenchOptions,
): Promise<RunningSystem> {
  await admin.xgroup('CREATE', FLOOR.tasks, FLOOR.group, '$', 'MKSTREAM');
  const echo = opts.verbose;
  const consumers = await Promise.all(
    Array.from({ length: opts.workers }, (_, i) =>
      children.spawnNode({
        name: `floor-consumer-${i}`,
        role: 'workers',
        entry: entry('floor/consumer.ts'),
        env: { REDIS_URL: redisUrl, CONSUMER: `c${i}` },
        ipc: true,
        echo,
      }),
    ),
  );
  // Ready once it listens; started again on another port if its own was taken.
  const { port: gatewayPort, child: gateway } = await spawnListening(
    children,
    {
      name: 'floor-gateway',
      role: 'front',
      entry: entry('floor/gateway.ts'),
      env: { REDIS_URL: redisUrl },
      ipc: true,
      echo,
    },
    'GATEWAY_PORT',
    (child) => child.next((m) => m.type === 'ready', 30_000, 'ready'),
  );
  const caller = await children.spawnNode({
    name: 'floor-caller',
    role: 'caller',
    entry: entry('floor/caller.ts'),
    env: {
      REDIS_URL: redisUrl,
      GATEWAY_URL: `http://127.0.0.1:${gatewayPort}`,
      HTTP_CONNECTIONS: String(opts.httpConnections),
    },
    ipc: true,
    echo,
  });
  await Promise.all(
    [...consumers, caller].map((c) => c.next((m) => m.type === 'ready', 30_000, 'ready')),
  );
  return {
    name: 'floor',
    caller,
    processes: [caller, gateway, ...consumers],
    httpOnly: [gateway],
    // Acknowledged entries stay in a stream until trimmed; keep the streams small between runs.
    async betweenRuns() {
      const streams = (await admin.keys('floor:*')).filter((k) => k.startsWith('floor:'));
      const pipe = admin.pipeline();
      for (const s of streams) pipe.xtrim(s, 'MAXLEN', 0);
      await pipe.exec();
    },
    awake: () => Promise.resolve(),
  };
}
