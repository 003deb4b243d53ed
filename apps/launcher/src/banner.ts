import type { ClusterTopology } from './cluster-topology.ts';
import { DEMO_ENDPOINTS, endpointUrl, type EndpointPorts } from './demo-endpoints.ts';
import type { Banner } from './output.ts';
import type { DataServices } from './stack-data.ts';

/** What {@link stackBanner} shows. */
export interface BannerFacts {
  routerPort: number;
  registryUrl: string;
  /** What to show for Redis. */
  redis: string;
  /** The `--cluster` topology: where nginx sends callers and agents. */
  topology?: ClusterTopology | undefined;
  data: DataServices;
  bucket: string;
  /** The demo agents' ids. */
  agents: readonly string[];
  /** Ports of the relays' own endpoints (`/healthz`, `/metrics`). */
  relayPorts: readonly number[];
  /** Where the demo endpoint agents listen. */
  endpointPorts: EndpointPorts;
  /**
   * The `messageId` of the A2A try-it line: the gateway answers a message sent again with the
   * task it made the first time, so each start prints a new one. @default 'try-a2a-1'
   */
  a2aMessageId?: string;
  /** API keys required: the curl lines send the admin key (by its variable, never its value). */
  keys: boolean;
}

/** A text long enough that the summary cuts it (the demo keeps 12 words). */
const SUMMARIZE_TEXT =
  'An A2A server, an HTTP endpoint or an MCP server joins the fleet by its URL alone, with no line of its code changed.';

/** The payload each endpoint capability is tried with: what the demo server reads. */
const TRY_PAYLOADS: Record<string, unknown> = {
  summarize: { text: SUMMARIZE_TEXT },
  'http.echo': { hello: 'endpoint' },
  word_count: { text: 'endpoint agents join the fleet by URL' },
};

/**
 * What `npm start` prints once the stack is up: the URLs and the lines to try. It is the last
 * block printed, so it ends with a blank line and says nothing that scrolls.
 */
export function stackBanner(o: BannerFacts): Banner {
  const router = `http://127.0.0.1:${o.routerPort}`;
  const auth = o.keys ? ` -H "Authorization: Bearer $REACH_ADMIN_KEY"` : '';
  const json = ` -H 'content-type: application/json'`;
  const behind = (ports: readonly number[]) => `  (nginx → ${ports.map((p) => `:${p}`).join(' ')})`;
  const t = o.topology;
  const headline = `Agent-Reach is running${t ? ': the cluster topology' : ''}`;
  const relays = o.relayPorts.map((p) => `http://127.0.0.1:${p}`);
  const endpoints = DEMO_ENDPOINTS.map((e) => ({
    e,
    url: endpointUrl(e, o.endpointPorts[e.kind]),
  }));
  const idWidth = Math.max(...endpoints.map(({ e }) => e.agentId.length));
  const urlWidth = Math.max(...endpoints.map(({ url }) => url.length));
  const endpointRows = endpoints
    .map(
      ({ e, url }, i) =>
        `${i === 0 ? '  endpoint agents         ' : ' '.repeat(26)}${e.agentId.padEnd(idWidth)}  ${url.padEnd(urlWidth)}  ${e.what}`,
    )
    .join('\n');
  const taskLines = DEMO_ENDPOINTS.map(
    (e) =>
      `  curl -s -XPOST 'localhost:${o.routerPort}/v1/tasks?wait_ms=5000'${auth}${json} -d '${JSON.stringify({ capability: e.capability, payload: TRY_PAYLOADS[e.capability] ?? {} })}'`,
  ).join('\n');
  const a2aMessage = {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      message: {
        kind: 'message',
        messageId: o.a2aMessageId ?? 'try-a2a-1',
        role: 'user',
        parts: [
          {
            kind: 'text',
            text: 'A2A in, a task on the queue, A2A out: the relay calls the A2A server, and its answer comes back as this task.',
          },
        ],
        metadata: { capability: 'summarize' },
      },
    },
  };
  const text = `
${headline}.
  router (callers)        ${router}${t ? behind(t.routerPorts) : ''}
  registry-sync (agents)  ${o.registryUrl}${t ? behind(t.registryPorts) : ''}
  redis                   ${o.redis}
  influxdb                ${o.data.influxUrl}  (database ${o.bucket})
  demo agents             ${o.agents.join(', ')}  (capability "echo": the result is the payload)
${endpointRows}
  ${(relays.length > 1 ? 'relays' : 'relay').padEnd(24)}${relays.join(', ')}  (${relays.length > 1 ? 'they call' : 'it calls'} the endpoint agents: docs/ENDPOINTS.md)
  API keys                ${o.keys ? `required (REACH_AUTH=required); the demo agents hold an agent key, the ${o.relayPorts.length > 1 ? 'relays' : 'relay'} a relay key` : 'off: loopback only (REACH_AUTH=auto); see docs/SECURITY.md'}

Try it (an agent is routed to as soon as its registration is answered):
  curl -s -XPOST localhost:${o.routerPort}/v1/tasks${auth} -H 'content-type: application/json' -d '{"capability":"echo","payload":{"hello":"world"}}'
  curl -s localhost:${o.routerPort}/v1/tasks/<task_id>${auth}

The endpoint agents, through the router (the reply waits up to 5 s for the result):
${taskLines}

A2A end to end (the router's A2A gateway → the queue → the relay → the A2A server):
  curl -s -XPOST localhost:${o.routerPort}/a2a${auth}${json} -d '${JSON.stringify(a2aMessage)}'

Ctrl-C stops everything.

`;
  return {
    headline,
    text,
    fields: {
      router: router,
      registry_sync: o.registryUrl,
      redis: o.redis,
      influxdb: o.data.influxUrl,
      influx_database: o.bucket,
      agents: o.agents,
      endpoint_agents: endpoints.map(({ e, url }) => ({
        agent_id: e.agentId,
        protocol: e.kind,
        url,
        capability: e.capability,
      })),
      relays,
      api_keys: o.keys ? 'required' : 'off',
    },
  };
}
