import { entryOf } from '@agent-reach/launcher';
import { nodeArgsFor, spawnManaged, type ManagedProcess } from '@agent-reach/process-kit';
import { decodeCallback, reachKeys } from '@agent-reach/protocol';
import { onFreePort, startNodeService, waitFor, type ServiceProcess } from '@agent-reach/testkit';
import type { TestRedis } from './redis.ts';
import { http, START_TIMEOUT_MS, type Stack } from './stack.ts';

/** Fast relay settings so that failover tests finish in seconds. */
export const FAST_RELAY = {
  REACH_RELAY_LEASE_MS: '2000',
  REACH_ENDPOINT_PROBE_MS: '200',
  REACH_ENDPOINT_CHECK_MS: '1000',
  REACH_RELAY_SWEEP_MS: '500',
};

/** A relay process serving the stack's endpoint agents. */
export async function startRelay(
  stack: Stack,
  env: Record<string, string> = {},
): Promise<{ proc: ServiceProcess; url: string }> {
  const { port, started } = await onFreePort('relay', (p) =>
    startNodeService({
      name: `relay-${p}`,
      entry: entryOf('relay'),
      env: {
        ...stack.env,
        ...FAST_RELAY,
        RELAY_PORT: String(p),
        REACH_RELAY_REGISTRY_URL: stack.registryUrl,
        ...env,
      },
      healthUrl: `http://127.0.0.1:${p}/healthz`,
      timeoutMs: START_TIMEOUT_MS,
    }),
  );
  return { proc: started, url: `http://127.0.0.1:${port}` };
}

/** A demo endpoint server (apps/relay/src/demo) as a process of its own, to be killed. */
export async function startEndpointProcess(
  kind: 'a2a' | 'http' | 'mcp',
): Promise<{ proc: ManagedProcess; url: string }> {
  let resolveUrl!: (url: string) => void;
  const url = new Promise<string>((r) => (resolveUrl = r));
  const proc = await spawnManaged({
    name: `endpoint-${kind}`,
    command: process.execPath,
    args: [...nodeArgsFor(entryOf('endpoint-demo')), '--kind', kind, '--port', '0'],
    onLine: (line) => {
      if (!line.startsWith('{')) return;
      try {
        const parsed = JSON.parse(line) as { url?: string };
        if (parsed.url) resolveUrl(parsed.url);
      } catch {
        // not the line we wait for
      }
    },
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), START_TIMEOUT_MS);
  const found = await Promise.race([
    url,
    proc.exited.then((code) => {
      throw new Error(`endpoint ${kind} exited ${code} before listening:\n${proc.output()}`);
    }),
  ]);
  clearTimeout(timer);
  return { proc, url: found };
}

/** Declares an endpoint agent on registry-sync; throws unless it was accepted. */
export async function declareEndpoint(
  stack: Stack,
  agentId: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<void> {
  const res = await http(`${stack.registryUrl}/v1/endpoints/${agentId}`, {
    method: 'PUT',
    body,
    headers,
  });
  if (res.status !== 200)
    throw new Error(`declaring ${agentId}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** An agent's status as registry-sync shows it, or undefined while it is not registered. */
export async function agentStatus(stack: Stack, agentId: string): Promise<string | undefined> {
  const res = await http<{ status?: string }>(`${stack.registryUrl}/v1/agents/${agentId}`);
  return res.status === 200 ? res.body.status : undefined;
}

/** Waits until every agent of `agentIds` is HEALTHY. */
export async function untilHealthy(
  stack: Stack,
  agentIds: readonly string[],
  timeoutMs = 20_000,
): Promise<void> {
  await waitFor(
    async () => {
      for (const id of agentIds) if ((await agentStatus(stack, id)) !== 'HEALTHY') return false;
      return true;
    },
    { timeoutMs },
  );
}

/**
 * Waits until the stack's router routes `capability` to an agent. An agent registry-sync just
 * called HEALTHY reaches a router with the next snapshot; until then a submission gets 503
 * NO_AGENT, which a caller would send again.
 */
export async function untilRouted(
  stack: Stack,
  capability: string,
  timeoutMs = 10_000,
): Promise<void> {
  await waitFor(
    async () => {
      const res = await http<{ agent_id?: string }>(
        `${stack.routerUrl}/v1/route?capability=${encodeURIComponent(capability)}`,
      );
      return res.status === 200 && (res.body.agent_id ?? '') !== '';
    },
    { timeoutMs, message: `the router never routed ${capability} to an agent` },
  );
}

/** How many final items (completed or dead) each task has on a callback topic. */
export async function finalCounts(
  redis: TestRedis,
  prefix: string,
  topic: string,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const [, fields] of await redis.xrange(reachKeys(prefix).callback(topic), '-', '+')) {
    const item = decodeCallback(fields);
    if (item.status === 'completed' || item.status === 'dead')
      counts.set(item.task_id, (counts.get(item.task_id) ?? 0) + 1);
  }
  return counts;
}
