/**
 * The endpoints file (REACH_ENDPOINTS_FILE) on a registry-sync in process, on the real test
 * Redis: applied at start and on every change, its entries read-only through the API, entries
 * that leave it removed (declarations made through the API never), and a bad file logged with
 * its reason — never its secrets — leaving the stored set as it was.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { decodeEndpointRecord, reachKeys, type ReachKeys } from '@agent-reach/protocol';
import { serviceLogger } from '@agent-reach/service-kit';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

let dir: string;
let service: RegistryService | undefined;
let redis: Redis;
let prefix: string;
let keys: ReachKeys;
let logLines: string[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'reach-endpoints-'));
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  redis = new Redis(testServices().redisUrl);
  logLines = [];
});

afterEach(async () => {
  await service?.close();
  service = undefined;
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
  rmSync(dir, { recursive: true, force: true });
});

async function start(file: string): Promise<RegistryService> {
  const capture = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  service = await createRegistryService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      probeIntervalMs: 60_000,
      endpointsFile: file,
      endpointHosts: ['agents.internal'],
    },
    { logger: serviceLogger('registry-sync', 'debug', capture), housekeeping: false },
  );
  return service;
}

/** Writes the file as editors and config maps do: a new file renamed over the old one. */
function replace(file: string, text: string): void {
  const next = `${file}.next`;
  writeFileSync(next, text);
  renameSync(next, file);
}

const stored = async () => {
  const all = await redis.hgetall(keys.endpoints());
  return Object.fromEntries(
    Object.entries(all).map(([id, text]) => [id, decodeEndpointRecord(text)]),
  );
};

const YAML_FILE = `# endpoint agents of this deployment
endpoints:
  - agent_id: summariser
    protocol: a2a
    url: http://127.0.0.1:9001
    tenant: acme
    bearer_secret: hush-file-1
  - agent_id: scorer
    protocol: http
    url: http://agents.internal:8080/score
    capabilities: [score]
    max_concurrency: 8
    headers:
      X-Api-Key: hush-file-2
`;

describe('the endpoints file', () => {
  it('is applied at start, read-only through the API, and followed when it changes', async () => {
    const file = join(dir, 'endpoints.yaml');
    writeFileSync(file, YAML_FILE);
    const s = await start(file);
    const first = await stored();
    expect(first['summariser']).toMatchObject({
      tenant: 'acme',
      source: 'file',
      key_capabilities: ['*'],
      has_bearer_secret: true,
    });
    expect(first['scorer']).toMatchObject({
      tenant: 'default',
      capabilities: ['score'],
      max_concurrency: 8,
      header_names: ['X-Api-Key'],
    });
    expect(JSON.parse((await redis.hget(keys.endpointSecrets(), 'summariser')) ?? '{}')).toEqual({
      bearer_secret: 'hush-file-1',
    });

    const put = await s.app.inject({
      method: 'PUT',
      url: '/v1/endpoints/scorer',
      payload: { protocol: 'a2a', url: 'http://127.0.0.1:1' },
    });
    expect(put.statusCode).toBe(409);
    expect(put.json()).toMatchObject({ error: 'ENDPOINT_READ_ONLY' });
    expect((await s.app.inject({ method: 'DELETE', url: '/v1/endpoints/scorer' })).statusCode).toBe(
      409,
    );
    // A declaration made through the API is not the file's: it stays whatever the file says.
    const api = await s.app.inject({
      method: 'PUT',
      url: '/v1/endpoints/by-api',
      payload: { protocol: 'mcp', url: 'http://127.0.0.1:9009/mcp' },
    });
    expect(api.statusCode).toBe(200);

    replace(
      file,
      `endpoints:
  - agent_id: scorer
    protocol: http
    url: http://agents.internal:8080/score
    capabilities: [score, rank]
    headers:
      X-Api-Key: hush-file-2
  - agent_id: translator
    protocol: mcp
    url: http://127.0.0.1:9010/mcp
`,
    );
    await waitFor(async () => (await stored())['translator'] !== undefined, { timeoutMs: 5000 });
    const after = await stored();
    expect(Object.keys(after).sort()).toEqual(['by-api', 'scorer', 'translator']);
    expect(after['scorer']).toMatchObject({ capabilities: ['score', 'rank'], max_concurrency: 4 });
    expect(after['scorer']?.created_at).toBe(first['scorer']?.created_at);
    expect(await redis.hexists(keys.endpointSecrets(), 'summariser')).toBe(0);
    expect(logLines.join('')).not.toContain('hush');
  });

  it('reads JSON, and leaves the stored set as it was when the file is bad', async () => {
    const file = join(dir, 'endpoints.json');
    writeFileSync(
      file,
      JSON.stringify({
        endpoints: [{ agent_id: 'one', protocol: 'a2a', url: 'http://127.0.0.1:9001' }],
      }),
    );
    await start(file);
    expect(Object.keys(await stored())).toEqual(['one']);
    const refusedSoFar = () => logLines.filter((l) => l.includes('endpoints file refused')).length;

    // Not JSON (with a secret in it): refused, logged with the reason, the secret nowhere.
    replace(file, '{"endpoints": [{"agent_id": "two", "bearer_secret": hush-file-3}]}');
    await waitFor(() => refusedSoFar() === 1, { timeoutMs: 5000 });
    // A host nobody allowed: refused as a whole, its good entries too.
    replace(
      file,
      JSON.stringify({
        endpoints: [
          { agent_id: 'two', protocol: 'a2a', url: 'http://127.0.0.1:9002' },
          { agent_id: 'three', protocol: 'a2a', url: 'http://example.com/agent' },
        ],
      }),
    );
    await waitFor(() => refusedSoFar() === 2, { timeoutMs: 5000 });
    // The same agent_id twice, and an http endpoint without capabilities.
    replace(
      file,
      JSON.stringify({
        endpoints: [
          { agent_id: 'two', protocol: 'a2a', url: 'http://127.0.0.1:9002' },
          { agent_id: 'two', protocol: 'a2a', url: 'http://127.0.0.1:9003' },
        ],
      }),
    );
    await waitFor(() => refusedSoFar() === 3, { timeoutMs: 5000 });
    replace(
      file,
      JSON.stringify({
        endpoints: [{ agent_id: 'two', protocol: 'http', url: 'http://127.0.0.1:1' }],
      }),
    );
    await waitFor(() => refusedSoFar() === 4, { timeoutMs: 5000 });
    expect(Object.keys(await stored())).toEqual(['one']);
    const reasons = logLines
      .filter((l) => l.includes('endpoints file refused'))
      .map((l) => (JSON.parse(l) as { reason: string }).reason);
    expect(reasons[0]).toContain('not valid JSON');
    expect(reasons[1]).toContain('REACH_ENDPOINT_HOSTS');
    expect(reasons[2]).toContain('declared twice');
    expect(reasons[3]).toContain('capabilities');
    expect(logLines.join('')).not.toContain('hush');

    // Fixed: applied.
    replace(file, JSON.stringify({ endpoints: [] }));
    await waitFor(async () => Object.keys(await stored()).length === 0, { timeoutMs: 5000 });
  });

  it('starts with a missing file, says so, and applies it once it appears', async () => {
    const file = join(dir, 'later.yaml');
    await start(file);
    expect(logLines.join('')).toContain('endpoints file cannot be read');
    replace(
      file,
      'endpoints:\n  - {agent_id: late, protocol: a2a, url: "http://127.0.0.1:9011"}\n',
    );
    await waitFor(async () => (await stored())['late'] !== undefined, { timeoutMs: 5000 });
  });
});
