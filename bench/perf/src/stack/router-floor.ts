import type { Redis } from 'ioredis';
import type { BenchOptions } from '../options.ts';
import type { ChildSet } from '../proc/children.ts';
import type { Pinning } from '../proc/pin.ts';
import { ROUTER_FLOOR_STREAM } from '../systems/router-only/shared.ts';
import { callbackTopic, REACH_CAPABILITY } from './reach.ts';
import { spawnListening } from './ports.ts';
import { entry, type RunningSystem } from './running.ts';

/**
 * Starts the router floor of `--modes router-only` (`router-floor`): its fastify server, on
 * `pin.measured` as the router is, and its caller on `pin.rest`.
 */
export async function startRouterFloor(
  children: ChildSet,
  admin: Redis,
  redisUrl: string,
  opts: BenchOptions,
  pin?: Pinning,
): Promise<RunningSystem> {
  const echo = opts.verbose;
  const { port, child: server } = await spawnListening(
    children,
    {
      name: 'router-floor-server',
      role: 'front',
      entry: entry('router-only/floor-server.ts'),
      env: { REDIS_URL: redisUrl },
      ipc: true,
      echo,
      ...(pin ? { cpus: pin.measured } : {}),
    },
    'FLOOR_PORT',
    (child) => child.next((m) => m.type === 'ready', 30_000, 'ready'),
  );
  const caller = await children.spawnNode({
    name: 'router-floor-caller',
    role: 'caller',
    entry: entry('router-only/floor-caller.ts'),
    env: {
      FLOOR_URL: `http://127.0.0.1:${port}`,
      BENCH_CAPABILITY: REACH_CAPABILITY,
      CALLBACK_TOPIC: callbackTopic('router-floor'),
    },
    ipc: true,
    echo,
    ...(pin ? { cpus: pin.rest } : {}),
  });
  await caller.next((m) => m.type === 'ready', 30_000, 'ready');
  return {
    name: 'router-floor',
    caller,
    processes: [caller, server],
    httpOnly: [],
    batchLike: 'router',
    // Nothing reads the stream: keep it small between runs.
    async betweenRuns() {
      await admin.xtrim(ROUTER_FLOOR_STREAM, 'MAXLEN', 0);
    },
    awake: () => Promise.resolve(),
  };
}
