import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, onFreePort } from './net.ts';

describe('freePort', () => {
  it('hands out ports below the ephemeral range that a server can listen on', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(32_768);
    }
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', resolve);
    });
    expect(server.address()).toMatchObject({ port: ports[0] });
    await new Promise((r) => server.close(r));
  });
});

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('onFreePort', () => {
  it('gives a port the child can listen on', async () => {
    const { port, started } = await onFreePort('test', listen);
    expect(started.address()).toMatchObject({ port });
    await new Promise((r) => started.close(r));
  });

  it('starts again on another port when the child lost the race for its port', async () => {
    const tried: number[] = [];
    const { port } = await onFreePort('test', async (p) => {
      tried.push(p);
      if (tried.length === 1)
        throw new Error(
          `child exited while waiting for /healthz:\nlisten EADDRINUSE: address already in use 127.0.0.1:${p}`,
        );
      return p;
    });
    expect(tried).toHaveLength(2);
    expect(port).toBe(tried[1]);
  });

  it('does not retry any other failure, and gives up after the attempts', async () => {
    let calls = 0;
    await expect(
      onFreePort('test', async () => {
        calls++;
        throw new Error('router exited: REDIS_URL is not a redis:// URL');
      }),
    ).rejects.toThrow('REDIS_URL');
    expect(calls).toBe(1);
    calls = 0;
    await expect(
      onFreePort(
        'test',
        async () => {
          calls++;
          throw new Error('listen EADDRINUSE');
        },
        2,
      ),
    ).rejects.toThrow('EADDRINUSE');
    expect(calls).toBe(2);
  });
});
