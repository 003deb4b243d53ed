/**
 * The protocol-edge leg of the fuzz: what the OpenAPI documents do not describe — every A2A
 * JSON-RPC method (1.0 and 0.3 names, at `/a2a/<capability>` and `/a2a`), every MCP method and
 * tool over `/mcp` and through one `reach mcp` process, the event streams' `Last-Event-ID`, and
 * registration with hostile AgentCards — against the leg's fixture (live agents, decoys, a flow
 * of valid tasks), with tasks, push configs and another tenant's tasks seeded for the ids.
 */
import fc from 'fast-check';
import type { Stack } from '../stack.ts';
import { a2aTargets } from './a2a.ts';
import { runCampaign, type FuzzTarget } from './campaign.ts';
import { startCardServer } from './card-server.ts';
import { Figures } from './figures.ts';
import {
  DECOY_CAPABILITY,
  FLOW_CAPABILITY,
  metricsFigures,
  startFixture,
  watchExits,
  type LegOptions,
} from './fixture.ts';
import type { TaskFlow } from './flow.ts';
import { MCP_HEADERS, MCP_PATH, mcpTargets, type McpContext } from './mcp.ts';
import { RELAY_KEY, ReachMcpProcess, reachMcpTarget } from './mcp-stdio.ts';
import { registrationTargets } from './registration.ts';
import {
  FUZZ_CONCURRENCY,
  FUZZ_ID_COUNT,
  FUZZ_ONLY,
  FUZZ_RPC_COUNT,
  FUZZ_SEED,
  saveFigures,
} from './settings.ts';
import { sseTargets } from './sse.ts';
import type { KnownIds } from './task-ids.ts';

/** A capability no agent serves: a send there is `NO_AGENT`. */
const NOBODY = 'fuzz-nobody';

/** What the edge leg needs besides what every leg does. */
export interface EdgeLegOptions extends LegOptions {
  /** The tenant of the leg's keys (`default` when open). */
  tenant: string;
  /** `Authorization` values of keys that see every tenant (operators, the admin key). */
  seesAll?: string[];
  /**
   * `Authorization` values of keys that may call `/a2a` and `/mcp` (callers, operators): most
   * requests carry one, so that most reach the JSON-RPC methods rather than a 401 or 403.
   */
  callers?: string[];
}

/** What the edge leg saw. */
export interface EdgeLegResult {
  targets: FuzzTarget[];
  figures: Figures;
  flow: TaskFlow;
  unfinished: { id: string; status: string }[];
  exits: string[];
  /** How `reach mcp` ended once its stdin ended (`timeout` if it did not), when it was fuzzed. */
  relayEnd?: number | null | 'timeout';
}

/** Runs the leg: seeds ids, fuzzes every edge with the flow alongside, checks the relay's end. */
export async function runEdgeLeg(opts: EdgeLegOptions): Promise<EdgeLegResult> {
  const { stack } = opts;
  const figures = new Figures();
  watchExits(stack, figures);
  const fixture = await startFixture(opts, 'fuzz-edge-flow');
  const cards = await startCardServer({ capability: DECOY_CAPABILITY });
  let relay: ReachMcpProcess | undefined;
  try {
    const bearer = opts.callerKey ? `Bearer ${opts.callerKey}` : undefined;
    const hookUrl = `${cards.url}/hook`;
    const a2aSeeds = await seedA2A(stack, bearer, hookUrl);
    const own = [...fixture.seeded, ...a2aSeeds.ids];
    const ids: KnownIds = {
      own: [...own, ...own.slice(0, 5).map((id) => `${opts.tenant}/${id}`)],
      foreign: await foreignIds(stack, opts, fixture.seeded),
    };
    const auth = authArb(fixture.credentials, opts.callers ?? []);
    const seesAll = new Set(opts.seesAll ?? []);
    const counts = { count: FUZZ_RPC_COUNT, idCount: FUZZ_ID_COUNT };
    const mcp: McpContext = {
      routerUrl: stack.routerUrl,
      ids,
      auth,
      seesAll,
      capability: FLOW_CAPABILITY,
      nobody: NOBODY,
      ...counts,
    };
    // One relay process, spawned only when it is fuzzed.
    if (!FUZZ_ONLY || FUZZ_ONLY.test(RELAY_KEY))
      relay = new ReachMcpProcess({
        routerUrl: stack.routerUrl,
        ...(opts.callerKey ? { key: opts.callerKey } : {}),
      });
    const all: FuzzTarget[] = [
      ...a2aTargets({
        routerUrl: stack.routerUrl,
        ids,
        auth,
        seesAll,
        knownIds: own,
        pushConfigIds: a2aSeeds.configIds,
        hookUrl,
        capability: FLOW_CAPABILITY,
        nobody: NOBODY,
        ...counts,
      }),
      ...mcpTargets(mcp),
      ...(relay ? [reachMcpTarget(mcp, relay)] : []),
      ...sseTargets({ routerUrl: stack.routerUrl, knownIds: own, auth, ...counts }),
      ...registrationTargets({
        registryUrl: stack.registryUrl,
        routerUrl: stack.routerUrl,
        cardServerUrl: cards.url,
        cardPaths: cards.cardPaths,
        agentIds: fixture.decoys.map((d) => d.id),
        capability: DECOY_CAPABILITY,
        auth,
        count: FUZZ_RPC_COUNT,
      }),
    ];
    const targets = all.filter((t) => !FUZZ_ONLY || FUZZ_ONLY.test(t.key));
    const fuzzed = relay && targets.some((t) => t.sender === relay) ? relay : undefined;
    let fuzzing = true;
    // An exit while it is fuzzed is a finding; its end once its stdin ended is checked below.
    void fuzzed?.exited.then((code) => {
      if (fuzzing) figures.recordExit('reach mcp', code);
    });
    await runCampaign({
      targets,
      concurrency: FUZZ_CONCURRENCY,
      seed: FUZZ_SEED,
      livez: { router: stack.routerUrl, 'registry-sync': stack.registryUrl },
      stopped: () => figures.exits.length > 0,
      figures,
    });
    fuzzing = false;
    const relayEnd = fuzzed ? await fuzzed.end() : undefined;
    const unfinished = await fixture.finish(figures.exits.length > 0);
    const { flow } = fixture;
    const text = [
      figures.format(
        `${opts.title}, protocol edges (seed ${FUZZ_SEED}, ${FUZZ_RPC_COUNT} per method, ` +
          `${FUZZ_ID_COUNT} per method taking a task id)`,
      ),
      `valid tasks: ${flow.accepted.length} accepted, ` +
        `${flow.accepted.length - unfinished.length} completed, ${flow.refused.length} refused ` +
        `(${flow.retried} submissions answered 429 and sent again); ` +
        `push notifications received: ${cards.pushes()}`,
      ...(fuzzed ? [`reach mcp: ended with ${relayEnd} when its stdin ended`] : []),
      ...(fuzzed?.stderr().trim()
        ? [`reach mcp stderr (last lines):\n${lastLines(fuzzed.stderr(), 5)}`]
        : []),
      await metricsFigures(stack),
    ].join('\n');
    console.log(text);
    saveFigures(opts.name, text);
    return {
      targets,
      figures,
      flow,
      unfinished,
      exits: figures.exits,
      ...(relayEnd !== undefined ? { relayEnd } : {}),
    };
  } finally {
    if (relay?.alive) await relay.end(5000);
    await cards.close();
    await fixture.close();
  }
}

/** Credentials: mostly keys that may call the methods, then any of the leg's, then none. */
function authArb(credentials: string[], callers: string[]): fc.Arbitrary<string | undefined> {
  const any = fc.option(fc.constantFrom(...credentials), { nil: undefined, freq: 4 });
  if (callers.length === 0) return any;
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...callers) },
    { weight: 1, arbitrary: any },
  );
}

function lastLines(text: string, n: number): string {
  return text
    .trimEnd()
    .split('\n')
    .slice(-n)
    .map((l) => `  ${l.slice(0, 300)}`)
    .join('\n');
}

/** Posts one JSON-RPC call; its `result`, or throws with the reply. */
async function rpc(
  url: string,
  method: string,
  params: unknown,
  bearer?: string,
): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(url.endsWith(MCP_PATH) ? MCP_HEADERS : {}),
      ...(bearer ? { authorization: bearer } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (res.status !== 200 || body.error !== undefined)
    throw new Error(`${method} answered ${res.status} ${JSON.stringify(body)}`);
  return body.result;
}

/**
 * Tasks sent through A2A (blocking: they end before the fuzz) with two push configs each, for the
 * fuzz to read, list, replace and delete.
 */
async function seedA2A(
  stack: Stack,
  bearer: string | undefined,
  hookUrl: string,
): Promise<{ ids: string[]; configIds: string[] }> {
  const url = `${stack.routerUrl}/a2a/${FLOW_CAPABILITY}`;
  const ids: string[] = [];
  const configIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = `fuzz-a2a-seed-${i}`;
    const message = { messageId: id, role: 'ROLE_USER', parts: [{ text: `seed ${i}` }] };
    await rpc(url, 'SendMessage', { message }, bearer);
    for (const c of ['a', 'b']) {
      const configId = `cfg-seed-${i}-${c}`;
      await rpc(
        url,
        'CreateTaskPushNotificationConfig',
        { taskId: id, id: configId, url: hookUrl, token: 't' },
        bearer,
      );
      configIds.push(configId);
    }
    ids.push(id);
  }
  return { ids, configIds };
}

/**
 * Another tenant's task ids as the leg's callers would name them: with keys, real tasks of the
 * other tenant (bare, which names the caller's own tenant's, and `<tenant>/<id>`); open, the
 * seeded ids under a tenant that has none.
 */
async function foreignIds(stack: Stack, opts: EdgeLegOptions, seeded: string[]): Promise<string[]> {
  const other = opts.otherTenant;
  if (!other) return seeded.slice(0, 3).map((id) => `fuzz-other/${id}`);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const id = `fuzz-other-${i}`;
    const res = await fetch(`${stack.routerUrl}/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${other.callerKey}` },
      // Held an hour: no agent of that tenant needs to be live for the task to exist.
      body: JSON.stringify({
        task_id: id,
        capability: FLOW_CAPABILITY,
        payload: { i },
        delay_ms: 3_600_000,
      }),
    });
    if (res.status !== 202 && res.status !== 200)
      throw new Error(`the other tenant's task ${id}: ${res.status} ${await res.text()}`);
    ids.push(id, `${other.name}/${id}`);
  }
  return ids;
}
