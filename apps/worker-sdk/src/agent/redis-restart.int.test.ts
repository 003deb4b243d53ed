import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitFor } from '@agent-reach/testkit';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { startHarness, type Harness } from '../testing/harness.ts';
import { Gate } from '../testing/support.ts';

// This test owns its Redis, since it kills it; it needs the redis-server binary.
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

let h: Harness | undefined;
let server: ChildProcess | undefined;
let dir: string | undefined;

async function startRedis(port: number): Promise<ChildProcess> {
  dir ??= await mkdtemp(join(tmpdir(), 'reach-sdk-redis-'));
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ],
    {
      stdio: 'ignore',
    },
  );
  const probe = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await waitFor(
      async () => {
        if (probe.status !== 'ready') await probe.connect();
        return (await probe.ping()) === 'PONG';
      },
      { message: `redis-server on ${port}` },
    );
  } finally {
    probe.disconnect();
  }
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

afterEach(async () => {
  await h?.cleanup().catch(() => undefined);
  if (server !== undefined) await kill(server);
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  h = server = dir = undefined;
});

it.skipIf(!hasRedisServer)(
  'keeps in-flight work and recovers by itself when Redis restarts empty',
  async () => {
    const port = await freePort();
    server = await startRedis(port);
    h = await startHarness({ redisUrl: `redis://127.0.0.1:${port}` });
    const gate = new Gate();
    const agent = h.agent({
      maxConcurrency: 2,
      handler: (t) =>
        t.taskId === 'held' ? gate.promise.then(() => 'survived') : Promise.resolve(t.taskId),
    });
    const reg = await agent.start().ready();
    await h.addTask(reg.agent_id, { task_id: 'held' });
    await waitFor(async () => (await h!.acksOf('held')).length === 1, { message: 'held received' });

    await kill(server);
    server = await startRedis(port); // no persistence: the stream, its group and the acks are gone
    gate.open();
    await waitFor(async () => (await h!.acksOf('held')).some((a) => a['stage'] === 'completed'), {
      timeoutMs: 20_000,
      message: 'in-flight completion written after the restart',
    });
    await waitFor(() => h!.registry.registers.length >= 2, {
      timeoutMs: 20_000,
      message: 're-registered (NOGROUP)',
    });
    await h.addTask(reg.agent_id, { task_id: 'after-restart' });
    const acks = await waitFor(
      async () => {
        const a = await h!.acksOf('after-restart');
        return a.length === 2 && a;
      },
      { timeoutMs: 20_000, message: 'task after the restart' },
    );
    expect(acks[1]).toMatchObject({ stage: 'completed', result: '"after-restart"' });
    expect(agent.state).toBe('running');
  },
);
