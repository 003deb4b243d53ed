import { describe, expect, it } from 'vitest';
import { isEndpointsFileError, readEndpointsFile } from './endpoints-file.ts';

/** The reason a file is refused for. */
function refusal(path: string, text: string, loopback = true): string {
  try {
    readEndpointsFile(path, text, { hosts: [], loopback });
  } catch (err: unknown) {
    if (isEndpointsFileError(err)) return err.message;
    throw err;
  }
  throw new Error('the file was accepted');
}

describe('readEndpointsFile', () => {
  it('reads YAML (anchors merged) and JSON into checked entries', () => {
    const yaml = `
defaults: &defaults
  protocol: a2a
  max_concurrency: 2
endpoints:
  - <<: *defaults
    agent_id: one
    url: http://127.0.0.1:9001
  - agent_id: two
    tenant: acme
    protocol: http
    url: https://agents.internal/run
    capabilities: [run]
`;
    expect(
      readEndpointsFile('e.yaml', yaml, { hosts: ['agents.internal'], loopback: true }),
    ).toEqual([
      { protocol: 'a2a', max_concurrency: 2, agent_id: 'one', url: 'http://127.0.0.1:9001' },
      {
        agent_id: 'two',
        tenant: 'acme',
        protocol: 'http',
        url: 'https://agents.internal/run',
        capabilities: ['run'],
      },
    ]);
    expect(
      readEndpointsFile(
        'e.JSON',
        '{"endpoints": [{"agent_id": "a", "protocol": "mcp", "url": "http://localhost/mcp"}]}',
        { hosts: [], loopback: true },
      ),
    ).toHaveLength(1);
  });

  it('names what is wrong, and never quotes the file (it holds secrets)', () => {
    const yaml = refusal('e.yaml', 'endpoints:\n  - bearer_secret: "hush\n   x: [');
    expect(yaml).toMatch(/^not valid YAML: \w+ at line \d+, column \d+$/);
    const json = refusal('e.json', '{"endpoints": [{"bearer_secret": hush}]}');
    expect(json).toMatch(/^not valid JSON/);
    for (const reason of [yaml, json]) expect(reason).not.toContain('hush');
    expect(refusal('e.yaml', 'endpoint: []')).toContain('endpoints');
    expect(
      refusal(
        'e.yaml',
        'endpoints:\n  - {agent_id: a, protocol: a2a, url: "http://127.0.0.1", colour: red}',
      ),
    ).toContain('/endpoints/0');
  });

  it('checks each entry as the API checks a declaration, and agent_ids once each', () => {
    const entry = (extra: string) => `endpoints:\n  - {agent_id: a, ${extra}}\n`;
    expect(refusal('e.yaml', entry('protocol: http, url: "http://127.0.0.1"'))).toContain(
      'needs capabilities',
    );
    expect(refusal('e.yaml', entry('protocol: a2a, url: "http://example.com"'))).toContain(
      'REACH_ENDPOINT_HOSTS',
    );
    expect(
      refusal(
        'e.yaml',
        entry('protocol: a2a, url: "http://127.0.0.1", health_url: "http://u:p@127.0.0.1"'),
      ),
    ).toContain('health_url may not carry credentials');
    const twice =
      'endpoints:\n  - {agent_id: a, protocol: a2a, url: "http://127.0.0.1"}\n  - {agent_id: a, protocol: a2a, url: "http://127.0.0.1:2"}\n';
    expect(refusal('e.yaml', twice)).toContain('declared twice');
    // REACH_OUTBOUND_LOOPBACK=off: no loopback host, in the file either.
    expect(refusal('e.yaml', entry('protocol: a2a, url: "http://127.0.0.1:9"'), false)).toContain(
      'url host 127.0.0.1 is not in REACH_ENDPOINT_HOSTS',
    );
  });
});
