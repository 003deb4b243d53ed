import { describe, expect, it } from 'vitest';
import { declarationOf, DEMO_ENDPOINTS, readableDemoLine } from './demo-endpoints.ts';

describe('the demo endpoint agents', () => {
  it('are declared by URL: A2A base, HTTP endpoint with its capability, MCP URL', () => {
    const ports = { a2a: 1001, http: 1002, mcp: 1003 } as const;
    expect(DEMO_ENDPOINTS.map((e) => [e.agentId, declarationOf(e, ports[e.kind])])).toEqual([
      ['demo-a2a', { protocol: 'a2a', url: 'http://127.0.0.1:1001', meta: { demo: true } }],
      [
        'demo-http',
        {
          protocol: 'http',
          url: 'http://127.0.0.1:1002/echo',
          capabilities: ['http.echo'],
          meta: { demo: true },
        },
      ],
      ['demo-mcp', { protocol: 'mcp', url: 'http://127.0.0.1:1003/mcp', meta: { demo: true } }],
    ]);
  });

  it('print their JSON lines as sentences, and anything else as it came', () => {
    expect(readableDemoLine('{"url":"http://127.0.0.1:8091"}')).toBe(
      'listening at http://127.0.0.1:8091',
    );
    expect(readableDemoLine('{"cancelled":"t-1"}')).toBe('call t-1 stopped early');
    expect(readableDemoLine('{"level":30,"msg":"x"}')).toBe('{"level":30,"msg":"x"}');
    expect(readableDemoLine('{not json')).toBe('{not json');
    expect(readableDemoLine('plain')).toBe('plain');
  });
});
