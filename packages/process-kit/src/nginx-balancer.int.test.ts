import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBinary, freePort, startLoadBalancer, type ManagedProcess } from './index.ts';

const nginxBin = findBinary('nginx');

/** A tiny service: 200 on /healthz, its name on /who, 503 on /who while `busy`. */
function service(name: string): { server: Server; busy: boolean; port: () => number } {
  const s = {
    busy: false,
    server: createServer((req, res) => {
      if (req.url === '/who' && s.busy) res.writeHead(503).end('busy');
      else res.writeHead(200).end(req.url === '/who' ? name : 'ok');
    }),
    port: () => (s.server.address() as { port: number }).port,
  };
  return s;
}

describe.skipIf(!nginxBin)('startLoadBalancer', () => {
  const a = service('a');
  const b = service('b');
  let dir = '';
  let port = 0;
  let nginx: ManagedProcess | undefined;

  beforeAll(async () => {
    await new Promise<void>((r) => a.server.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => b.server.listen(0, '127.0.0.1', r));
    dir = await mkdtemp(join(tmpdir(), 'reach-nginx-'));
    port = await freePort();
    nginx = await startLoadBalancer({
      bin: nginxBin as string,
      dir,
      fronts: [{ name: 'pair', port, upstreamPorts: [a.port(), b.port()] }],
    });
  });

  afterAll(async () => {
    await nginx?.stop('SIGTERM', 5000);
    a.server.close();
    b.server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const who = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/who`);
    return `${res.status} ${await res.text()}`;
  };

  it('spreads requests over both services and moves on from a 503 and from a closed one', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 10; i++) seen.add(await who());
    expect([...seen].sort()).toEqual(['200 a', '200 b']);

    b.busy = true;
    for (let i = 0; i < 6; i++) expect(await who()).toBe('200 a');
    b.busy = false;

    a.server.closeAllConnections();
    await new Promise<void>((r) => a.server.close(() => r()));
    for (let i = 0; i < 6; i++) expect(await who()).toBe('200 b');
  });
});
