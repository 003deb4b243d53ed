/**
 * Health grades routing (docs/ROUTING.md, Health in the score): of two equal agents, the one that
 * fails 5 % of its tasks — under the DEGRADED threshold, so HEALTHY all along — gets at most 45 %
 * of the first attempts of 2,000 tasks, once its health score has shown it. First attempts only:
 * a retry avoids the agent that failed it anyway. The figure is printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { http, START_TIMEOUT_MS, startStack, type Stack } from '../support/stack.ts';
import { untilRouted } from '../support/endpoints.ts';

const TASKS = 2000;
const CAPABILITY = 'graded';

let stack: Stack;
const agents: ReachAgent[] = [];
/** First attempts each agent ran. */
const firsts: Record<string, number> = { steady: 0, flaky: 0 };
let flakyRuns = 0;

beforeAll(async () => {
  stack = await startStack({ env: { REACH_SNAPSHOT_MS: '500', REACH_RETRY_BASE_MS: '100' } });
  agents.push(
    await startAgent(
      stack,
      'steady',
      [CAPABILITY],
      async (t) => {
        if (t.attempt === 1) firsts.steady = (firsts.steady ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 10));
        return t.payload;
      },
      { maxConcurrency: 8 },
    ),
    await startAgent(
      stack,
      'flaky',
      [CAPABILITY],
      async (t) => {
        if (t.attempt === 1) firsts.flaky = (firsts.flaky ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 10));
        // One task in twenty fails: a 95 health score, under the 10 % that makes it DEGRADED.
        if (++flakyRuns % 20 === 0) throw new Error('the model gateway timed out');
        return t.payload;
      },
      { maxConcurrency: 8 },
    ),
  );
  await untilRouted(stack, CAPABILITY);
}, 2 * START_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

describe('an agent failing 5 % of its tasks', () => {
  it('gets at most 45 % of the first attempts beside a healthy peer', async () => {
    let next = 0;
    const statuses = new Map<number, number>();
    const submitter = async () => {
      while (next < TASKS) {
        const n = next++;
        const res = await http(`${stack.routerUrl}/v1/tasks`, {
          body: { task_id: `graded-${n}`, capability: CAPABILITY, payload: { n } },
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await Promise.all([submitter(), submitter(), submitter(), submitter()]);
    const first = () => (firsts.steady ?? 0) + (firsts.flaky ?? 0);
    const deadline = Date.now() + 60_000;
    while (first() < TASKS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const flakyShare = (firsts.flaky ?? 0) / first();
    const health = await http<{ agents: { agent_id: string; health_score: number }[] }>(
      `${stack.registryUrl}/v1/agents`,
    );
    console.log(
      `health routing: ${JSON.stringify({
        tasks: TASKS,
        first_attempts: firsts,
        flaky_share: Number(flakyShare.toFixed(3)),
        flaky_failures: Math.floor(flakyRuns / 20),
        health_scores: Object.fromEntries(
          health.body.agents.map((a) => [a.agent_id, a.health_score]),
        ),
        submissions_by_status: Object.fromEntries(statuses),
      })}`,
    );
    expect(statuses.get(202)).toBe(TASKS);
    expect(first()).toBe(TASKS);
    expect(flakyShare).toBeLessThanOrEqual(0.45);
  }, 180_000);

  it('reports each agent’s event loop, GC and memory with its heartbeats', async () => {
    type Runtime = { loop_lag_p99_ms: number; gc_share?: number; rss_bytes: number };
    let runtime: Runtime | undefined;
    await waitFor(
      async () => {
        const res = await http<{ runtime?: Runtime }>(`${stack.registryUrl}/v1/agents/steady`);
        runtime = res.body.runtime;
        return runtime !== undefined;
      },
      { timeoutMs: 15_000, message: 'no heartbeat carried runtime figures' },
    );
    expect(runtime?.loop_lag_p99_ms).toBeGreaterThanOrEqual(0);
    expect(runtime?.gc_share).toBeGreaterThanOrEqual(0);
    expect(runtime?.gc_share).toBeLessThanOrEqual(1);
    // This test process runs both agents: its own resident set, within a factor of two.
    const rss = process.memoryUsage.rss();
    expect(runtime?.rss_bytes).toBeGreaterThan(rss / 2);
    expect(runtime?.rss_bytes).toBeLessThan(rss * 2);
    await waitFor(
      async () =>
        /^reach_agent_resident_memory_bytes\{[^}]*agent_id="steady"[^}]*\} \d+/m.test(
          await (await fetch(`${stack.registryUrl}/metrics`)).text(),
        ),
      { timeoutMs: 15_000, message: 'the runtime figures did not reach /metrics' },
    );
  }, 60_000);
});
