/**
 * The OpenAPI leg of the HTTP fuzz against a running stack: the campaign over every endpoint
 * both services publish in `/docs/json`, with the leg's fixture (live agents, decoys, a flow of
 * valid tasks) alongside.
 */
import fc from 'fast-check';
import { operationTargets, runCampaign } from './campaign.ts';
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
import { loadOperations, operationKey, type Operation } from './operations.ts';
import { FUZZ_CONCURRENCY, FUZZ_COUNT, FUZZ_ONLY, FUZZ_SEED, saveFigures } from './settings.ts';

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
  const figures = new Figures();
  watchExits(stack, figures);
  const fixture = await startFixture(opts, 'fuzz-flow');
  try {
    const published = [
      ...(await loadOperations('router', stack.routerUrl)),
      ...(await loadOperations('registry-sync', stack.registryUrl)),
    ];
    const ops = published.filter((op) => !FUZZ_ONLY || FUZZ_ONLY.test(operationKey(op)));
    const targets = operationTargets(ops, FUZZ_COUNT, () => ({
      known: {
        task_id: fixture.seeded,
        agent_id: fixture.decoys.map((d) => d.id),
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
      auth: fc.option(fc.constantFrom(...fixture.credentials), { nil: undefined, freq: 4 }),
    }));
    await runCampaign({
      targets,
      concurrency: FUZZ_CONCURRENCY,
      seed: FUZZ_SEED,
      livez: { router: stack.routerUrl, 'registry-sync': stack.registryUrl },
      stopped: () => figures.exits.length > 0,
      figures,
    });
    const unfinished = await fixture.finish(figures.exits.length > 0);
    const { flow } = fixture;
    const text = [
      figures.format(`${opts.title} (seed ${FUZZ_SEED}, ${FUZZ_COUNT} per endpoint)`),
      `valid tasks: ${flow.accepted.length} accepted, ` +
        `${flow.accepted.length - unfinished.length} completed, ${flow.refused.length} refused ` +
        `(${flow.retried} submissions answered 429 and sent again); ` +
        `service exits: ${figures.exits.length}`,
      await metricsFigures(stack),
    ].join('\n');
    console.log(text);
    saveFigures(opts.name, text);
    return { published, ops, figures, flow, unfinished, exits: figures.exits };
  } finally {
    await fixture.close();
  }
}
