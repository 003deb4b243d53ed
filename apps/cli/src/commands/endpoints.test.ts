/**
 * `reach endpoints` against a stub registry-sync answering the documented replies: the
 * declaration it sends, how it renders the replies, and its usage errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EndpointView } from '@agent-reach/protocol';
import { runCli, type Io } from '../cli.ts';
import { startStub, type StubServer } from '../testing/stub-server.ts';

let stub: StubServer;
let registry: string[];

async function reach(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
    stderrIsTTY: false,
  };
  const code = await runCli([...argv, ...registry], io);
  return { code, out, err };
}

/** The reply of registry-sync to a declaration: the body as stored, without its secrets. */
function viewOf(agentId: string, body: Record<string, unknown>): EndpointView {
  const {
    headers,
    bearer_secret: secret,
    ...rest
  } = body as {
    headers?: Record<string, string>;
    bearer_secret?: string;
  } & Record<string, unknown>;
  return {
    agent_id: agentId,
    max_concurrency: 4,
    timeout_ms: 60_000,
    shared: false,
    ...(rest as { protocol: string; url: string }),
    tenant: 'default',
    source: 'api',
    header_names: Object.keys(headers ?? {}),
    has_bearer_secret: secret !== undefined,
    created_at: 1000,
    updated_at: 1000,
  };
}

const listed: EndpointView[] = [
  viewOf('summariser', { protocol: 'a2a', url: 'http://127.0.0.1:9001', capability_prefix: 'x.' }),
  {
    ...viewOf('scorer', {
      protocol: 'http',
      url: 'http://127.0.0.1:9002/score',
      capabilities: ['score'],
    }),
    source: 'file',
  },
];

beforeAll(async () => {
  stub = await startStub({
    'PUT /v1/endpoints/scorer': ({ body }) => ({
      status: 200,
      body: viewOf('scorer', JSON.parse(body) as Record<string, unknown>),
    }),
    'PUT /v1/endpoints/elsewhere': {
      status: 403,
      body: {
        error: 'ENDPOINT_URL_NOT_ALLOWED',
        message: 'url host example.com is neither loopback nor in REACH_ENDPOINT_HOSTS',
      },
    },
    'GET /v1/endpoints': { status: 200, body: { endpoints: listed } },
    'DELETE /v1/endpoints/scorer': { status: 204, body: null },
    'DELETE /v1/endpoints/from-file': {
      status: 409,
      body: { error: 'ENDPOINT_READ_ONLY', message: 'change it in the endpoints file' },
    },
  });
  registry = ['--registry', stub.url];
});

afterAll(async () => {
  await stub.close();
});

describe('reach endpoints add', () => {
  it('PUTs the declaration with repeated options gathered, and never prints its secrets', async () => {
    const run = await reach([
      'endpoints',
      'add',
      'scorer',
      '--protocol',
      'http',
      '--url',
      'http://127.0.0.1:9002/score',
      '--capability',
      'score',
      '--capability',
      'rank',
      '--max-concurrency',
      '8',
      '--tag',
      'gpu',
      '--header',
      'X-Api-Key=hush-1',
      '--bearer-secret',
      'hush-2',
    ]);
    expect(run).toMatchObject({ code: 0, err: '' });
    const sent = stub.requests.at(-1);
    expect(sent?.method).toBe('PUT');
    expect(JSON.parse(sent?.body ?? '{}')).toEqual({
      protocol: 'http',
      url: 'http://127.0.0.1:9002/score',
      capabilities: ['score', 'rank'],
      max_concurrency: 8,
      tags: ['gpu'],
      headers: { 'X-Api-Key': 'hush-1' },
      bearer_secret: 'hush-2',
    });
    expect(run.out).toContain('endpoint scorer: http http://127.0.0.1:9002/score');
    expect(run.out).toContain('stored: header X-Api-Key, bearer secret');
    expect(run.out).not.toContain('hush');
  });

  it('prints the server’s code with exit 3, and refuses bad options with exit 2', async () => {
    const refused = await reach([
      'endpoints',
      'add',
      'elsewhere',
      '--protocol',
      'a2a',
      '--url',
      'http://example.com',
    ]);
    expect(refused.code).toBe(3);
    expect(refused.err).toContain('reach: ENDPOINT_URL_NOT_ALLOWED:');
    const bad = async (...args: string[]) => (await reach(['endpoints', ...args])).err;
    expect(await bad('add', 'x', '--url', 'http://127.0.0.1')).toContain(
      'usage: reach endpoints add',
    );
    expect(await bad('add', 'x', '--protocol', 'grpc', '--url', 'http://h')).toContain(
      '--protocol must be one of a2a, http, mcp',
    );
    expect(
      await bad('add', 'x', '--protocol', 'a2a', '--url', 'http://h', '--max-concurrency', '0'),
    ).toContain('--max-concurrency must be a whole number');
    const header = await bad(
      'add',
      'x',
      '--protocol',
      'a2a',
      '--url',
      'http://h',
      '--header',
      'hush',
    );
    expect(header).toContain('--header takes Name=Value');
    expect(header).not.toContain('hush');
    expect(await bad('list', '--url', 'http://h')).toContain('takes no --url');
    expect((await reach(['endpoints', 'deploy'])).code).toBe(2);
  });
});

describe('reach endpoints list and remove', () => {
  it('lists the declarations as a table, and --json as the reply', async () => {
    const run = await reach(['endpoints', 'list']);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/AGENT\s+PROTOCOL\s+URL\s+CAPABILITIES\s+MAX\s+TENANT\s+SOURCE/);
    expect(run.out).toMatch(
      /summariser\s+a2a\s+http:\/\/127\.0\.0\.1:9001\s+\(discovered, x\.\*\)/,
    );
    expect(run.out).toMatch(/scorer\s+http\s+\S+\s+score\s+4\s+default\s+file/);
    const json = await reach(['endpoints', 'list', '--json']);
    expect(JSON.parse(json.out)).toEqual({ endpoints: listed });
  });

  it('removes a declaration, and says why a file entry cannot be', async () => {
    expect(await reach(['endpoints', 'remove', 'scorer'])).toMatchObject({
      code: 0,
      out: 'removed scorer: its relay stops serving it\n',
    });
    expect(stub.requests.at(-1)?.method).toBe('DELETE');
    expect(await reach(['endpoints', 'remove', 'from-file'])).toMatchObject({
      code: 3,
      err: 'reach: ENDPOINT_READ_ONLY: change it in the endpoints file\n',
    });
  });
});
