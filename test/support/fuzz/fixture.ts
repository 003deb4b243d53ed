/**
 * What every fuzz leg runs against besides the stack: two live agents serving a capability,
 * decoy agents the fuzz may heartbeat, fence, drain and serve with their real tokens, a flow of
 * valid tasks that must all complete, and a watch on every service process for an exit.
 */
import pino from 'pino';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { http, type Stack } from '../stack.ts';
import type { Figures } from './figures.ts';
import { TaskFlow } from './flow.ts';

/** The capability the live agents serve and the valid tasks ask for. */
export const FLOW_CAPABILITY = 'fuzz-echo';
/** The capability of the decoys, which never read their inboxes. */
export const DECOY_CAPABILITY = 'fuzz-decoy';

/** What a leg needs besides the stack. */
export interface LegOptions {
  /** Names the figures' file (test/artifacts/<name>.txt). */
  name: string;
  title: string;
  stack: Stack;
  /** API key the live agents and decoys register with (auth on). */
  agentKey?: string;
  /** API key the flow of valid tasks is submitted with (auth on). */
  callerKey?: string;
  /** Other valid `Authorization` values the fuzz mixes in (keys of every role). */
  credentials?: string[];
  /** Keys of another tenant (auth on), whose tasks the fuzz names with the leg's own keys. */
  otherTenant?: { name: string; callerKey: string };
}

/** A decoy agent: registered, never reading its inbox. */
export interface Decoy {
  id: string;
  token: string;
}

/** The agents, decoys and flow of one leg. */
export interface LegFixture {
  decoys: Decoy[];
  flow: TaskFlow;
  /** Tasks of the flow submitted before the fuzz (known ids for it to name). */
  seeded: string[];
  /** Valid `Authorization` values: the decoys' tokens and the leg's keys. */
  credentials: string[];
  /**
   * Stops the flow and waits for its tasks (briefly when a service exited: they cannot end);
   * returns those that did not complete.
   */
  finish(serviceExited: boolean): Promise<{ id: string; status: string }[]>;
  /** Stops the agents. */
  close(): Promise<void>;
}

/** How long the flow's accepted tasks may take to complete once the fuzz is over. */
const FLOW_DRAIN_MS = 60_000;

/** Records each service's exit in `figures` (once per process). */
export function watchExits(stack: Stack, figures: Figures): void {
  for (const [name, svc] of [
    ['router', stack.router],
    ['registry-sync', stack.registry],
  ] as const)
    void svc.exited.then((code) => figures.recordExit(name, code));
}

/** Starts the live agents and decoys and submits the first valid tasks; the flow then runs on. */
export async function startFixture(opts: LegOptions, flowPrefix: string): Promise<LegFixture> {
  const { stack } = opts;
  const agents: ReachAgent[] = [];
  const close = () => Promise.all(agents.map((a) => a.close())).then(() => undefined);
  try {
    for (const id of ['fuzz-echo-a', 'fuzz-echo-b'])
      agents.push(await startEchoAgent(stack, id, opts.agentKey));
    const decoys = await registerDecoys(stack, 4, opts.agentKey);
    const flow = new TaskFlow({
      routerUrl: stack.routerUrl,
      capability: FLOW_CAPABILITY,
      idPrefix: flowPrefix,
      callbackTopic: 'fuzz-flow-topic',
      headers: opts.callerKey ? { authorization: `Bearer ${opts.callerKey}` } : {},
    });
    const seeded = await flow.submit(20);
    const credentials = [...decoys.map((d) => `Bearer ${d.token}`), ...(opts.credentials ?? [])];
    flow.start();
    return {
      decoys,
      flow,
      seeded,
      credentials,
      async finish(serviceExited) {
        await flow.stop();
        return flow.unfinished(serviceExited ? 2000 : FLOW_DRAIN_MS);
      },
      close,
    };
  } catch (err: unknown) {
    await close();
    throw err;
  }
}

/** `router 12 KiB, 40 series` of each service's `/metrics`: what the fuzz left in memory. */
export async function metricsFigures(stack: Stack): Promise<string> {
  const [router, registry] = await Promise.all(
    [stack.routerUrl, stack.registryUrl].map(async (base) => {
      try {
        const body = await (await fetch(`${base}/metrics`)).text();
        const series = body.split('\n').filter((l) => l && !l.startsWith('#')).length;
        return `${Math.round(body.length / 1024)} KiB, ${series} series`;
      } catch (err: unknown) {
        return `unreachable (${(err as Error).message})`;
      }
    }),
  );
  return `/metrics after the leg: router ${router}, registry-sync ${registry}`;
}

async function startEchoAgent(stack: Stack, agentId: string, apiKey?: string): Promise<ReachAgent> {
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId,
    capabilities: [FLOW_CAPABILITY],
    maxConcurrency: 16,
    handler: async (task) => task.payload,
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
    ...(apiKey ? { apiKey } : {}),
  });
  agent.start();
  await agent.ready();
  return agent;
}

async function registerDecoys(stack: Stack, count: number, apiKey?: string): Promise<Decoy[]> {
  const decoys: Decoy[] = [];
  for (let i = 0; i < count; i++) {
    const id = `fuzz-decoy-${i}`;
    const reg = await http<{ token: string }>(`${stack.registryUrl}/v1/agents/register`, {
      body: { agent_id: id, capabilities: [DECOY_CAPABILITY], max_concurrency: 1 },
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    });
    if (reg.status !== 200)
      throw new Error(`decoy ${id} not registered: ${reg.status} ${JSON.stringify(reg.body)}`);
    decoys.push({ id, token: reg.body.token });
  }
  return decoys;
}
