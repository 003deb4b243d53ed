import { describe, expect, it } from 'vitest';
import { stackBanner, type BannerFacts } from './banner.ts';
import type { DataServices } from './stack-data.ts';

const facts: BannerFacts = {
  routerPort: 8081,
  registryUrl: 'http://127.0.0.1:8080',
  redis: 'redis://127.0.0.1:6379',
  data: { influxUrl: 'http://127.0.0.1:8086' } as DataServices,
  bucket: 'reach',
  agents: ['echo-1', 'echo-2', 'echo-3'],
  relayPorts: [8082],
  endpointPorts: { a2a: 8091, http: 8092, mcp: 8093 },
  a2aMessageId: 'try-a2a-x1',
  keys: false,
};

/** The banner's `curl -s -XPOST` lines: the path and the JSON body each sends. */
function posts(text: string): { path: string; body: Record<string, unknown>; line: string }[] {
  return text.split('\n').flatMap((line) => {
    const m = /^ {2}curl -s -XPOST '?localhost:\d+([^' ]+)'? .*-d '([^']*)'$/.exec(line);
    return m ? [{ path: m[1]!, body: JSON.parse(m[2]!) as Record<string, unknown>, line }] : [];
  });
}

describe('stackBanner', () => {
  it('lists the endpoint agents and the relay', () => {
    const { text, fields } = stackBanner(facts);
    const lines = text.split('\n');
    expect(lines).toContain(
      '  endpoint agents         demo-a2a   http://127.0.0.1:8091       A2A server, skill "summarize"',
    );
    expect(lines).toContain(
      '                          demo-http  http://127.0.0.1:8092/echo  HTTP endpoint, capability "http.echo"',
    );
    expect(lines).toContain(
      '                          demo-mcp   http://127.0.0.1:8093/mcp   MCP server, tool "word_count"',
    );
    expect(lines).toContain(
      '  relay                   http://127.0.0.1:8082  (it calls the endpoint agents: docs/ENDPOINTS.md)',
    );
    expect(fields).toMatchObject({
      relays: ['http://127.0.0.1:8082'],
      endpoint_agents: [
        { agent_id: 'demo-a2a', protocol: 'a2a', url: 'http://127.0.0.1:8091' },
        { agent_id: 'demo-http', protocol: 'http', capability: 'http.echo' },
        { agent_id: 'demo-mcp', protocol: 'mcp', url: 'http://127.0.0.1:8093/mcp' },
      ],
    });
  });

  it('prints a task line for each endpoint capability and one through the A2A gateway', () => {
    const sent = posts(stackBanner(facts).text);
    expect(sent.map((p) => [p.path, p.body.capability])).toEqual([
      ['/v1/tasks', 'echo'],
      ['/v1/tasks?wait_ms=5000', 'summarize'],
      ['/v1/tasks?wait_ms=5000', 'http.echo'],
      ['/v1/tasks?wait_ms=5000', 'word_count'],
      ['/a2a', undefined],
    ]);
    // What each demo server reads: a text to summarize or count, anything to echo.
    expect(sent[1]!.body.payload).toEqual({ text: expect.any(String) });
    expect(sent[3]!.body.payload).toEqual({ text: expect.any(String) });
    expect(sent[4]!.body).toMatchObject({
      jsonrpc: '2.0',
      method: 'message/send',
      params: {
        message: {
          messageId: 'try-a2a-x1',
          role: 'user',
          parts: [{ kind: 'text', text: expect.any(String) }],
          metadata: { capability: 'summarize' },
        },
      },
    });
    // The URL with `?` is quoted, so that a shell does not read it as a pattern.
    expect(sent[1]!.line).toContain(`'localhost:8081/v1/tasks?wait_ms=5000'`);
  });

  it('sends the admin key on every line when keys are required, by its variable', () => {
    const sent = posts(stackBanner({ ...facts, keys: true }).text);
    expect(sent).toHaveLength(5);
    for (const { line } of sent)
      expect(line).toContain(`-H "Authorization: Bearer $REACH_ADMIN_KEY"`);
  });

  it('names both relays with --cluster', () => {
    const { text, fields } = stackBanner({ ...facts, relayPorts: [8082, 8083] });
    expect(text.split('\n')).toContain(
      '  relays                  http://127.0.0.1:8082, http://127.0.0.1:8083  (they call the endpoint agents: docs/ENDPOINTS.md)',
    );
    expect(fields.relays).toEqual(['http://127.0.0.1:8082', 'http://127.0.0.1:8083']);
  });
});
