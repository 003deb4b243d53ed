import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from '@agent-reach/testkit';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startHarness, type Harness } from './testing/harness.ts';
import { redisUrl } from './testing/support.ts';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.cleanup();
});

it('examples/echo-agent.ts serves echo, logs JSON lines, and exits 0 on SIGTERM after draining', async () => {
  const script = fileURLToPath(new URL('../examples/echo-agent.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: {
      ...process.env,
      REACH_REGISTRY_URL: h.registry.url,
      REDIS_URL: redisUrl(),
      REACH_AGENT_ID: 'echo-test',
      MAX_CONCURRENCY: '3',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await waitFor(() => h.registry.registers.length === 1, {
      timeoutMs: 20_000,
      message: `registered (stderr: ${stderr})`,
    });
    expect(h.registry.registers[0]).toMatchObject({
      agent_id: 'echo-test',
      capabilities: ['echo'],
      max_concurrency: 3,
    });
    await waitFor(() => stdout.includes('echo agent ready'));
    await h.addTask('echo-test', { task_id: 'ping', payload: '{"ping":1}' });
    const acks = await waitFor(async () => {
      const a = await h.acksOf('ping');
      return a.length === 2 && a;
    });
    expect(acks[1]).toMatchObject({ stage: 'completed', result: '{"ping":1}' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    child.kill('SIGKILL');
  }
  expect(h.registry.deregisters).toEqual(['echo-test']);
  const lines = stdout.trim().split('\n');
  for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
  expect(stderr).toBe('');
});
