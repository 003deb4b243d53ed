import type { ClusterTopology } from './cluster-topology.ts';
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
  /** API keys required: the curl lines send the admin key (by its variable, never its value). */
  keys: boolean;
}

/**
 * What `npm start` prints once the stack is up: the URLs and the lines to try. It is the last
 * block printed, so it ends with a blank line and says nothing that scrolls.
 */
export function stackBanner(o: BannerFacts): Banner {
  const router = `http://127.0.0.1:${o.routerPort}`;
  const auth = o.keys ? ` -H "Authorization: Bearer $REACH_ADMIN_KEY"` : '';
  const behind = (ports: readonly number[]) => `  (nginx → ${ports.map((p) => `:${p}`).join(' ')})`;
  const t = o.topology;
  const headline = `Agent-Reach is running${t ? ': the cluster topology' : ''}`;
  const text = `
${headline}.
  router (callers)        ${router}${t ? behind(t.routerPorts) : ''}
  registry-sync (agents)  ${o.registryUrl}${t ? behind(t.registryPorts) : ''}
  redis                   ${o.redis}
  influxdb                ${o.data.influxUrl}  (database ${o.bucket})
  demo agents             ${o.agents.join(', ')}  (capability "echo": the result is the payload)
  API keys                ${o.keys ? 'required (REACH_AUTH=required); the demo agents hold an agent key' : 'off: loopback only (REACH_AUTH=auto); see docs/SECURITY.md'}

Try it (an agent is routed to as soon as its registration is answered):
  curl -s -XPOST localhost:${o.routerPort}/v1/tasks${auth} -H 'content-type: application/json' -d '{"capability":"echo","payload":{"hello":"world"}}'
  curl -s localhost:${o.routerPort}/v1/tasks/<task_id>${auth}

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
      api_keys: o.keys ? 'required' : 'off',
    },
  };
}
