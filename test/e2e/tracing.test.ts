/**
 * OpenTelemetry spans across the three processes, as an OTLP collector receives them: the router
 * (submit → deliver), the agent (receive → handle, ack) and registry-sync (apply → callback) make
 * one trace per task, linked by the `traceparent` the stream entries carry, and a retry is a
 * second `deliver` span beside the first under the same `submit`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { stopTracing } from '@agent-reach/service-kit/tracing';
import { randomPrefix, waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

/** One span as the test reads it from an OTLP/JSON export. */
interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: OtlpAttribute[];
      }[];
    }[];
  }[];
}

const attrs = (list: OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries(
    (list ?? []).map((a) => [
      a.key,
      a.value.stringValue ??
        (a.value.intValue !== undefined ? Number(a.value.intValue) : a.value.boolValue),
    ]),
  );

/** A local OTLP/HTTP receiver: POST /v1/traces with JSON bodies (what the exporter sends). */
function startReceiver(): Promise<{ server: Server; url: string; spans: ReceivedSpan[] }> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
      for (const rs of body.resourceSpans ?? []) {
        const service = String(attrs(rs.resource?.attributes)['service.name']);
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              service,
              name: s.name,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              attributes: attrs(s.attributes),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}`, spans });
    });
  });
}

const OTEL_ENV = (url: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_BSP_SCHEDULE_DELAY: '200',
});

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let stack: Stack;
let agent: ReachAgent;
let leafAgent: ReachAgent;
const cap = `traced-${randomPrefix().slice(-6)}`;
const failedOnce = new Set<string>();

beforeAll(async () => {
  receiver = await startReceiver();
  const env = OTEL_ENV(receiver.url);
  stack = await startStack({
    env: { ...env, REACH_RETRY_BASE_MS: '100', REACH_RETRY_CAP_MS: '200' },
  });
  // The agent runs in this process: it reads the same settings from the environment.
  Object.assign(process.env, env);
  agent = await startAgent(stack, `${cap}-agent`, [cap], async (task) => {
    const payload = task.payload as { failOnce?: boolean; child?: boolean };
    // A child never goes to an agent that handled its ancestors (loop guard): another one runs it.
    if (payload.child)
      return { child: await task.submit({ capability: `${cap}-leaf`, payload: 'leaf' }).result() };
    if (payload.failOnce && !failedOnce.has(task.taskId)) {
      failedOnce.add(task.taskId);
      throw new Error('first attempt fails');
    }
    return { echo: task.payload };
  });
  leafAgent = await startAgent(stack, `${cap}-leaf-agent`, [`${cap}-leaf`], async (task) => ({
    echo: task.payload,
  }));
});

afterAll(async () => {
  await Promise.all([agent?.close(), leafAgent?.close()]);
  await stopTracing();
  for (const name of Object.keys(OTEL_ENV(''))) delete process.env[name];
  await stack?.stop();
  await new Promise((resolve) => receiver?.server.close(resolve));
});

/** The spans of one task's trace, once every name wanted arrived as often as wanted. */
async function traceOf(taskId: string, wanted: Record<string, number>): Promise<ReceivedSpan[]> {
  return waitFor(
    () => {
      const root = receiver.spans.find(
        (s) => s.name === 'submit' && s.attributes['reach.task_id'] === taskId,
      );
      if (!root) return undefined;
      const trace = receiver.spans.filter((s) => s.traceId === root.traceId);
      const enough = Object.entries(wanted).every(
        ([name, n]) => trace.filter((s) => s.name === name).length >= n,
      );
      return enough ? trace : undefined;
    },
    { timeoutMs: 15_000, message: `the spans of task ${taskId} never all arrived` },
  );
}

const one = (spans: ReceivedSpan[], name: string): ReceivedSpan => {
  const found = spans.filter((s) => s.name === name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};

describe('OpenTelemetry spans', () => {
  it('make one trace per task across router, agent and registry-sync, under the caller’s traceparent', async () => {
    const callerTrace = 'a3ce929d0e0e47364bf92f3577b34da6';
    const callerSpan = '00f067aa0ba902b7';
    const res = await http<{ task_id: string; result?: unknown }>(
      `${stack.routerUrl}/v1/tasks?wait_ms=10000`,
      {
        body: { capability: cap, payload: { hello: 1 } },
        headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` },
      },
    );
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({ echo: { hello: 1 } });
    const spans = await traceOf(res.body.task_id, {
      submit: 1,
      deliver: 1,
      receive: 1,
      handle: 1,
      ack: 1,
      apply: 1,
      callback: 1,
    });
    const submit = one(spans, 'submit');
    const deliver = one(spans, 'deliver');
    const receive = one(spans, 'receive');
    const handle = one(spans, 'handle');
    const ack = one(spans, 'ack');
    const apply = one(spans, 'apply');
    const callback = one(spans, 'callback');
    expect(submit.traceId).toBe(callerTrace);
    expect(submit.parentSpanId).toBe(callerSpan);
    expect(deliver.parentSpanId).toBe(submit.spanId);
    expect(receive.parentSpanId).toBe(deliver.spanId);
    expect(handle.parentSpanId).toBe(receive.spanId);
    expect(ack.parentSpanId).toBe(receive.spanId);
    expect(apply.parentSpanId).toBe(ack.spanId);
    expect(callback.parentSpanId).toBe(apply.spanId);
    expect([submit.service, deliver.service]).toEqual(['agent-reach-router', 'agent-reach-router']);
    expect(new Set([receive.service, handle.service, ack.service])).toEqual(
      new Set(['agent-reach-agent']),
    );
    expect([apply.service, callback.service]).toEqual([
      'agent-reach-registry-sync',
      'agent-reach-registry-sync',
    ]);
    expect(deliver.attributes['reach.attempt']).toBe(1);
  });

  it('shows a retried task as two sibling attempts in the same trace', async () => {
    const res = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: cap, payload: { failOnce: true } },
    });
    expect(res.status).toBe(202);
    const spans = await traceOf(res.body.task_id, { deliver: 2, receive: 2, apply: 2 });
    const submit = one(spans, 'submit');
    const delivers = spans
      .filter((s) => s.name === 'deliver')
      .sort(
        (a, b) => Number(a.attributes['reach.attempt']) - Number(b.attributes['reach.attempt']),
      );
    expect(delivers.map((d) => d.attributes['reach.attempt'])).toEqual([1, 2]);
    // Both attempts hang from the submission: the first sent by the router, the retry by registry-sync.
    expect(delivers.every((d) => d.parentSpanId === submit.spanId)).toBe(true);
    expect(delivers.map((d) => d.service)).toEqual([
      'agent-reach-router',
      'agent-reach-registry-sync',
    ]);
    const receives = spans.filter((s) => s.name === 'receive');
    expect(new Set(receives.map((r) => r.parentSpanId))).toEqual(
      new Set(delivers.map((d) => d.spanId)),
    );
  });

  it('puts a child task under the handler span of the task that submitted it', async () => {
    const res = await http<{ task_id: string; result?: unknown }>(
      `${stack.routerUrl}/v1/tasks?wait_ms=10000`,
      { body: { capability: cap, payload: { child: true } } },
    );
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({ child: { echo: 'leaf' } });
    const spans = await traceOf(res.body.task_id, { submit: 2, handle: 2, apply: 2 });
    const parentHandle = spans.find(
      (s) => s.name === 'handle' && s.attributes['reach.task_id'] === res.body.task_id,
    );
    const childSubmit = spans.find(
      (s) => s.name === 'submit' && s.attributes['reach.task_id'] !== res.body.task_id,
    );
    expect(parentHandle?.service).toBe('agent-reach-agent');
    expect(childSubmit?.service).toBe('agent-reach-router');
    expect(childSubmit?.parentSpanId).toBe(parentHandle?.spanId);
  });
});
