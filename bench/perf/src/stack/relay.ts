import { fileURLToPath } from 'node:url';
import type { BenchOptions } from '../options.ts';
import type { Child, ChildSet } from '../proc/children.ts';
import { sleep } from '../clock.ts';
import { processRssMiB } from '../proc/cpu.ts';
import { getJson, until } from './health.ts';
import { spawnListening } from './ports.ts';

/** Endpoint agents instead of worker-sdk agents: one relay and one demo endpoint server. */
export interface EndpointSpec {
  /** Which demo server (apps/relay/src/demo) the relay calls. */
  kind: 'http' | 'a2a';
  /** Endpoint agents declared; every one on the same server (HTTP: each on its own path). */
  agents: number;
}

/** What starting the endpoint agents measured, for `--modes relay-fleet`. */
export interface EndpointFacts {
  relay: Child;
  endpoint: Child;
  /** The relay's resident memory before the first declaration, MiB. */
  rssAtZeroMiB: number;
  /** First declaration → the last one accepted, ms. */
  declaredMs: number;
  /** First declaration → every agent HEALTHY on registry-sync, ms. */
  healthyMs: number;
}

/** Endpoint agents, the processes that serve them and the capability they answer. */
export interface EndpointAgents extends EndpointFacts {
  capability: string;
}

/** Prefix of the A2A demo's discovered skill (`bench.summarize`). */
const A2A_PREFIX = 'bench.';
/** Declarations sent at once. */
const DECLARE_CONCURRENCY = 32;

/** The `.ts` entry a package export resolves to (the `default` condition: the source). */
const entryOf = (specifier: string): string => fileURLToPath(import.meta.resolve(specifier));

/** The URL the demo server prints (`{"url": …}`) once listening. */
function printedUrl(output: string): string | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const { url } = JSON.parse(line) as { url?: unknown };
      if (typeof url === 'string') return url;
    } catch {
      // another line
    }
  }
  return undefined;
}

/**
 * Starts a demo endpoint server and a relay as processes of their own, declares `spec.agents`
 * endpoint agents on registry-sync, and waits until registry-sync holds every one HEALTHY.
 * `env` is the services' environment (Redis, prefix, thresholds); the relay adds its own.
 */
export async function startEndpointAgents(args: {
  children: ChildSet;
  name: string;
  registryUrl: string;
  env: Record<string, string>;
  spec: EndpointSpec;
  opts: BenchOptions;
  /** Headers of registry-sync's API (an admin key when keys are on). */
  auth: Record<string, string>;
  /** The capability HTTP endpoint agents serve (A2A ones serve the card's skill). */
  httpCapability: string;
}): Promise<EndpointAgents> {
  const { children, name, registryUrl, env, spec, opts, auth, httpCapability } = args;
  const echo = opts.verbose;
  const endpoint = await children.spawnNode({
    name: `${name}-endpoint`,
    role: 'endpoint',
    entry: entryOf('@agent-reach/relay/demo-main'),
    args: ['--kind', spec.kind, '--port', '0', '--host', '127.0.0.1'],
    env: {},
    echo,
  });
  let base = '';
  await until(
    `the ${spec.kind} endpoint server to listen`,
    () => Promise.resolve((base = printedUrl(endpoint.output()) ?? '') !== ''),
    30_000,
    endpoint,
  );
  const { child: relay } = await spawnListening(
    children,
    {
      name: `${name}-relay`,
      role: 'workers',
      entry: entryOf('@agent-reach/relay/server'),
      env: { ...env, REACH_RELAY_REGISTRY_URL: registryUrl },
      echo,
    },
    'RELAY_PORT',
    (child, port) =>
      until(
        'relay /healthz',
        async () => (await getJson(`http://127.0.0.1:${port}/healthz`)) !== undefined,
        30_000,
        child,
      ),
  );
  const rssAtZeroMiB = processRssMiB(relay.pid);
  const ids = Array.from({ length: spec.agents }, (_, i) => `${name}-ep-${i}`);
  const body = (i: number) =>
    spec.kind === 'http'
      ? { protocol: 'http', url: `${base}/a${i}`, capabilities: [httpCapability] }
      : { protocol: 'a2a', url: base, capability_prefix: A2A_PREFIX };
  const t0 = performance.now();
  let nextIndex = 0;
  const declareSome = async () => {
    for (let i = nextIndex++; i < ids.length; i = nextIndex++) {
      const res = await fetch(`${registryUrl}/v1/endpoints/${ids[i]}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ ...body(i), max_concurrency: opts.concurrency }),
      });
      if (res.status !== 200)
        throw new Error(`declaring ${ids[i]}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer().catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: DECLARE_CONCURRENCY }, declareSome));
  const declaredMs = performance.now() - t0;
  const wanted = new Set(ids);
  // Read every 250 ms, not faster: the list of 1,000 agents costs registry-sync CPU of its own.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (relay.hasExited()) throw new Error(`the relay exited:\n${relay.output()}`);
    const list = (await getJson(`${registryUrl}/v1/agents`, auth)) as
      { agents?: { agent_id?: string; status?: string }[] } | undefined;
    let healthy = 0;
    for (const a of list?.agents ?? [])
      if (a.status === 'HEALTHY' && wanted.has(a.agent_id ?? '')) healthy++;
    if (healthy === ids.length) break;
    if (Date.now() > deadline)
      throw new Error(
        `${healthy}/${ids.length} endpoint agents HEALTHY after 120 s:\n${relay.output()}`,
      );
    await sleep(250);
  }
  const healthyMs = performance.now() - t0;
  return {
    relay,
    endpoint,
    rssAtZeroMiB,
    declaredMs,
    healthyMs,
    capability: spec.kind === 'http' ? httpCapability : `${A2A_PREFIX}summarize`,
  };
}
