/**
 * The endpoint agents `npm start` runs beside the echo agents (docs/ENDPOINTS.md): the demo
 * servers of apps/relay/src/demo, which know nothing of Agent-Reach, each in a process of its own
 * on a fixed port, declared by URL on registry-sync and served by the relay(s).
 */
import type { EndpointBody, EndpointProtocol } from '@agent-reach/protocol';

/** One demo endpoint agent: what runs, where, and how registry-sync is told of it. */
export interface DemoEndpoint {
  /** Its agent id, and the name of its process in the output. */
  readonly agentId: string;
  /** The demo server's `--kind`, which is also the declaration's protocol. */
  readonly kind: EndpointProtocol;
  /** What a caller names in a task: the A2A skill, the HTTP capability or the MCP tool. */
  readonly capability: string;
  /** How the banner describes it. */
  readonly what: string;
}

/** The three of them, in start order. */
export const DEMO_ENDPOINTS: readonly DemoEndpoint[] = [
  {
    agentId: 'demo-a2a',
    kind: 'a2a',
    capability: 'summarize',
    what: 'A2A server, skill "summarize"',
  },
  {
    agentId: 'demo-http',
    kind: 'http',
    capability: 'http.echo',
    what: 'HTTP endpoint, capability "http.echo"',
  },
  {
    agentId: 'demo-mcp',
    kind: 'mcp',
    capability: 'word_count',
    what: 'MCP server, tool "word_count"',
  },
];

/** Ports of the demo endpoints, by kind. */
export type EndpointPorts = Record<EndpointProtocol, number>;

/** The fixed ports {@link DEMO_ENDPOINTS} listen on, checked free like the others (the test's launcher passes free ones). */
export const DEFAULT_ENDPOINT_PORTS: EndpointPorts = {
  a2a: 8091,
  http: 8092,
  mcp: 8093,
};

/** Where a demo server answers: its own base URL. */
export const endpointBaseUrl = (port: number) => `http://127.0.0.1:${port}`;

/**
 * The URL it is declared with: the A2A base URL (the relay reads the card below it), the HTTP
 * endpoint (the demo echoes any path), the MCP Streamable HTTP URL.
 */
export function endpointUrl(e: DemoEndpoint, port: number): string {
  const base = endpointBaseUrl(port);
  return e.kind === 'http' ? `${base}/echo` : e.kind === 'mcp' ? `${base}/mcp` : base;
}

/** The `PUT /v1/endpoints/:agent_id` body of a demo endpoint. */
export function declarationOf(e: DemoEndpoint, port: number): EndpointBody {
  return {
    protocol: e.kind,
    url: endpointUrl(e, port),
    // HTTP endpoints say what they serve; A2A skills and MCP tools are discovered.
    ...(e.kind === 'http' ? { capabilities: [e.capability] } : {}),
    meta: { demo: true },
  };
}

/** The demo server's command-line arguments after its entry. */
export const endpointArgs = (e: DemoEndpoint, port: number) => [
  '--kind',
  e.kind,
  '--port',
  String(port),
];

/** Declares each demo endpoint on registry-sync (a declaration made before is replaced). */
export async function declareDemoEndpoints(
  registryUrl: string,
  auth: Record<string, string>,
  ports: EndpointPorts,
): Promise<void> {
  for (const e of DEMO_ENDPOINTS) {
    const res = await fetch(`${registryUrl}/v1/endpoints/${e.agentId}`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify(declarationOf(e, ports[e.kind])),
    });
    const body = (await res.json().catch(() => ({}))) as { error?: string; message?: string };
    if (res.status !== 200)
      throw new Error(
        `declaring the endpoint agent ${e.agentId} failed: ${res.status} ${body.error ?? ''} ${body.message ?? ''}`.trimEnd(),
      );
  }
}

/**
 * A demo server's line as the output shows it. The servers speak to whoever started them in JSON
 * lines — `{"url": …}` once listening, `{"cancelled": <call>}` per call stopped early — which
 * read better as sentences beside the services' log lines; any other line is kept as it came.
 */
export function readableDemoLine(line: string): string {
  if (!line.startsWith('{')) return line;
  try {
    const said = JSON.parse(line) as { url?: unknown; cancelled?: unknown };
    if (typeof said.url === 'string') return `listening at ${said.url}`;
    if (typeof said.cancelled === 'string') return `call ${said.cancelled} stopped early`;
  } catch {
    // not one of theirs
  }
  return line;
}
