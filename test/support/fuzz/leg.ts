/**
 * One leg of the HTTP fuzz against a running stack: live agents serving a capability, decoy
 * agents the fuzz may heartbeat, fence, drain and serve with their real tokens, a flow of
 * valid tasks, and the campaign over every endpoint both services publish.
 */
import fc from 'fast-check';
import pino from 'pino';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { http, type Stack } from '../stack.ts';
import { runCampaign } from './campaign.ts';
import type { Figures } from './figures.ts';
import { TaskFlow } from './flow.ts';
import { loadOperations, operationKey, type Operation } from './operations.ts';
import { FUZZ_CONCURRENCY, FUZZ_COUNT, FUZZ_ONLY, FUZZ_SEED, saveFigures } from './settings.ts';

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
}

/** What a leg saw. */
export interface LegResult {
  /** Every operation the services publish (before any `REACH_FUZZ_ONLY` filter). */
  published: Operation[];
  ops: Operation[];
  figures: Figures;
  flow: TaskFlow;
  unfinished: { id: string; status: string }[];
  /** `router exited with 1`, … */
  exits: string[];
}

/** Starts agents and decoys, runs the campaign with the flow alongside, stops the agents. */
export async function runLeg(opts: LegOptions): Promise<LegResult> {
  const { stack } = opts;
  const exits: string[] = [];
  for (const [name, svc] of [
    ['router', stack.router],
    ['registry-sync', stack.registry],
  ] as const)
    void svc.exited.then((code) => exits.push(`${name} exited with ${code}`));
  const agents: ReachAgent[] = [];
  try {
    for (const id of ['fuzz-echo-a', 'fuzz-echo-b'])
      agents.push(await startEchoAgent(stack, id, opts.agentKey));
    const decoys = await registerDecoys(stack, 4, opts.agentKey);
    const published = [
      ...(await loadOperations('router', stack.routerUrl)),
      ...(await loadOperations('registry-sync', stack.registryUrl)),
    ];
    const ops = published.filter((op) => !FUZZ_ONLY || FUZZ_ONLY.test(operationKey(op)));
    const bearer = (key: string | undefined): Record<string, string> =>
      key ? { authorization: `Bearer ${key}` } : {};
    const flow = new TaskFlow({
      routerUrl: stack.routerUrl,
      capability: FLOW_CAPABILITY,
      idPrefix: `fuzz-flow`,
      callbackTopic: 'fuzz-flow-topic',
      headers: bearer(opts.callerKey),
    });
    const seeded = await flow.submit(20);
    const credentials = [...decoys.map((d) => `Bearer ${d.token}`), ...(opts.credentials ?? [])];
    flow.start();
    const figures = await runCampaign({
      ops,
      perEndpoint: FUZZ_COUNT,
      concurrency: FUZZ_CONCURRENCY,
      seed: FUZZ_SEED,
      stopped: () => exits.length > 0,
      requestOptions: () => ({
        known: {
          task_id: seeded,
          agent_id: decoys.map((d) => d.id),
          capability: [FLOW_CAPABILITY, DECOY_CAPABILITY],
          // Registrations never claim the flow's capability: a fuzzed agent that never reads its
          // inbox would make the flow's tasks wait for retries (the fuzz tests the API, the
          // liveness tests test that).
          capabilities: [DECOY_CAPABILITY],
          topic: ['fuzz-flow-topic'],
          callback_topic: ['fuzz-topic'],
        },
        // Long polls are held at most this long, so that a run is bounded in time.
        caps: { wait_ms: 200 },
        auth: fc.option(fc.constantFrom(...credentials), { nil: undefined, freq: 4 }),
      }),
    });
    await flow.stop();
    const unfinished = await flow.unfinished(60_000);
    const metrics = await Promise.all(
      [stack.routerUrl, stack.registryUrl].map(async (base) => {
        const body = await (await fetch(`${base}/metrics`)).text();
        const series = body.split('\n').filter((l) => l && !l.startsWith('#')).length;
        return `${Math.round(body.length / 1024)} KiB, ${series} series`;
      }),
    );
    const text = [
      figures.format(`${opts.title} (seed ${FUZZ_SEED}, ${FUZZ_COUNT} per endpoint)`),
      `valid tasks: ${flow.accepted.length} accepted, ` +
        `${flow.accepted.length - unfinished.length} completed, ${flow.refused.length} refused ` +
        `(${flow.retried} submissions answered 429 and sent again); ` +
        `service exits: ${exits.length}`,
      `/metrics after the leg: router ${metrics[0]}, registry-sync ${metrics[1]}`,
    ].join('\n');
    console.log(text);
    saveFigures(opts.name, text);
    return { published, ops, figures, flow, unfinished, exits };
  } finally {
    await Promise.all(agents.map((a) => a.close()));
  }
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

async function registerDecoys(
  stack: Stack,
  count: number,
  apiKey?: string,
): Promise<{ id: string; token: string }[]> {
  const decoys: { id: string; token: string }[] = [];
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
