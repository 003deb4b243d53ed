/**
 * `reach tenants` against a stub router answering the documented replies: the update it sends,
 * how it renders the records, and its usage errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TenantView } from '@agent-reach/protocol';
import { runCli, type Io } from '../cli.ts';
import { startStub, type StubServer } from '../testing/stub-server.ts';

let stub: StubServer;
let router: string[];

async function reach(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: { REACH_KEY: 'operator-key' },
    stderrIsTTY: false,
  };
  const code = await runCli([...argv, ...router], io);
  return { code, out, err };
}

const acme: TenantView = {
  tenant: 'acme',
  weight: 3,
  max_queued: 500,
  max_inflight: 0,
  max_fairness_weight: 4,
  updated_at: Date.UTC(2026, 11, 4, 12, 0, 0),
};
const globex: TenantView = {
  tenant: 'globex',
  weight: 1,
  max_queued: 0,
  max_inflight: 8,
  max_fairness_weight: 10,
  updated_at: 0,
};

beforeAll(async () => {
  stub = await startStub({
    'GET /v1/tenants': { status: 200, body: { tenants: [acme, globex] } },
    'GET /v1/tenants/acme': { status: 200, body: acme },
    'PUT /v1/tenants/acme': ({ body }) => ({
      status: 200,
      body: { ...acme, ...(JSON.parse(body) as Partial<TenantView>) },
    }),
    'PUT /v1/tenants/caller': {
      status: 403,
      body: { error: 'FORBIDDEN', message: 'this route takes operator keys' },
    },
  });
  router = ['--router', stub.url];
});

afterAll(async () => {
  await stub.close();
});

describe('reach tenants list and get', () => {
  it('lists the records as a table, and --json as the reply', async () => {
    const run = await reach(['tenants', 'list']);
    expect(run).toMatchObject({ code: 0, err: '' });
    expect(run.out).toMatch(/TENANT\s+WEIGHT\s+MAX QUEUED\s+MAX INFLIGHT\s+MAX FAIRNESS\s+UPDATED/);
    expect(run.out).toMatch(/acme\s+3\s+500\s+no cap\s+4\s+2026-12-04T12:00:00\.000Z/);
    expect(run.out).toMatch(/globex\s+1\s+default\s+8\s+10\s+never/);
    expect(run.out).toContain('2 tenants with a record');
    expect(stub.requests.at(-1)?.authorization).toBe('Bearer operator-key');
    const json = await reach(['tenants', 'list', '--json']);
    expect(JSON.parse(json.out)).toEqual({ tenants: [acme, globex] });
  });

  it('shows one record', async () => {
    const run = await reach(['tenants', 'get', 'acme']);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/acme\s+3\s+500/);
    expect(JSON.parse((await reach(['tenants', 'get', 'acme', '--json'])).out)).toEqual(acme);
  });
});

describe('reach tenants set', () => {
  it('PUTs only the fields given', async () => {
    const run = await reach([
      'tenants',
      'set',
      'acme',
      '--weight',
      '2.5',
      '--max-inflight',
      '16',
      '--json',
    ]);
    expect(run).toMatchObject({ code: 0, err: '' });
    const sent = stub.requests.at(-1);
    expect(sent?.method).toBe('PUT');
    expect(sent?.url.pathname).toBe('/v1/tenants/acme');
    expect(JSON.parse(sent?.body ?? '{}')).toEqual({ weight: 2.5, max_inflight: 16 });
    expect(JSON.parse(run.out)).toMatchObject({ weight: 2.5, max_inflight: 16, max_queued: 500 });
    const all = await reach([
      'tenants',
      'set',
      'acme',
      '--max-queued',
      '0',
      '--max-fairness-weight',
      '0.5',
    ]);
    expect(all.code).toBe(0);
    expect(JSON.parse(stub.requests.at(-1)?.body ?? '{}')).toEqual({
      max_queued: 0,
      max_fairness_weight: 0.5,
    });
  });

  it('prints the server’s code with exit 3', async () => {
    expect(await reach(['tenants', 'set', 'caller', '--weight', '2'])).toMatchObject({
      code: 3,
      err: 'reach: FORBIDDEN: this route takes operator keys\n',
    });
  });

  it('refuses a set with no option, bad values and stray options with exit 2', async () => {
    const sent = stub.requests.length;
    const bad = async (...args: string[]) => {
      const run = await reach(['tenants', ...args]);
      expect(run.code, args.join(' ')).toBe(2);
      return run.err;
    };
    expect(await bad('set', 'acme')).toContain('usage: reach tenants set');
    expect(await bad('set', '--weight', '2')).toContain('usage: reach tenants set');
    for (const w of ['0', '-1', '2000', 'x', '1e3'])
      expect(await bad('set', 'acme', `--weight=${w}`)).toContain(
        '--weight must be a number from 0.01 to 1000',
      );
    expect(await bad('set', 'acme', '--max-queued', '1.5')).toContain(
      '--max-queued must be a whole number',
    );
    expect(await bad('set', 'acme', '--max-inflight', '20000000')).toContain(
      '--max-inflight must be a whole number',
    );
    expect(await bad('set', 'acme', '--max-fairness-weight', '0')).toContain(
      '--max-fairness-weight must be a number',
    );
    expect(await bad('list', '--weight', '2')).toContain('takes no --weight');
    expect(await bad('get')).toContain('usage: reach tenants get <tenant>');
    expect(await bad('delete', 'acme')).toContain('usage: reach tenants list|get|set');
    expect(await bad('set', 'acme', '--tenant', 'x')).toContain('--tenant is not an option');
    expect(stub.requests.length).toBe(sent);
  });
});
