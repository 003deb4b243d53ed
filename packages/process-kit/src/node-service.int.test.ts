import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort, startNodeService } from './index.ts';

const entry = fileURLToPath(new URL('./fixtures/health-server.ts', import.meta.url));

describe('startNodeService', () => {
  it('starts a TypeScript entry, waits for /healthz and stops it with SIGTERM', async () => {
    const port = await freePort();
    const svc = await startNodeService({
      name: 'fixture',
      entry,
      env: { PORT: String(port) },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
    });
    expect(svc.output()).toContain(`fixture: listening on ${port}`);
    expect(await svc.stop()).toBe(0);
    expect(svc.output()).toContain('fixture: SIGTERM, closing');
  });

  it('fails with the exit code and output of a service that dies while starting', async () => {
    const port = await freePort();
    const started = startNodeService({
      name: 'crasher',
      entry,
      env: { PORT: String(port), FIXTURE_MODE: 'crash' },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
    });
    await expect(started).rejects.toThrow(
      /crasher exited \(exit code 3\)[\s\S]*FIXTURE_MODE=crash/,
    );
  });
});
