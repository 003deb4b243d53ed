import type { AgentAck, HeartbeatBody, RegisterReply } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ReachConnectionError, ReachHttpError } from '../errors.ts';
import { Heartbeat } from './heartbeat.ts';
import type { RegistryClient } from './registry-client.ts';

const session: RegisterReply = {
  agent_id: 'a',
  instance_id: 'i',
  epoch: 3,
  token: 'tok',
  stream: 's',
  group: 'g',
  acks_stream: 'acks',
  heartbeat_interval_ms: 20,
  lease_ms: 30_000,
  pools: [],
};

function setup(answer: () => Promise<AgentAck>, reportReady = false) {
  const logs: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) },
  );
  const sent: HeartbeatBody[] = [];
  const registry = {
    heartbeat: (_s: RegisterReply, body: HeartbeatBody) => (sent.push(body), answer()),
  } as unknown as RegistryClient;
  const events = { gone: 0, fenced: 0 };
  const answered: HeartbeatBody[] = [];
  const hb = new Heartbeat({
    registry,
    session: () => session,
    inflight: () => 2,
    maxConcurrency: 2,
    reportReady: () => reportReady,
    onAnswered: (body) => void answered.push(body),
    logger,
    onGone: () => void (events.gone += 1),
    onFenced: () => void (events.fenced += 1),
  });
  return { hb, logs, sent, events, answered };
}

const ok = (): Promise<AgentAck> =>
  Promise.resolve({ agent_id: 'a', epoch: 3, status: 'HEALTHY', lease_ms: 30_000 });
const httpError = (status: number, error: string) => () =>
  Promise.reject(new ReachHttpError('POST x', status, { error, message: '' }));

let stop: (() => void) | undefined;
afterEach(() => stop?.());

describe('Heartbeat', () => {
  it('sends inflight and busy/idle on a timer', async () => {
    const t = setup(ok);
    stop = () => t.hb.stop();
    t.hb.start();
    await waitFor(() => t.sent.length >= 3);
    expect(t.sent[0]).toEqual({ inflight: 2, status: 'busy' });
  });

  it('carries ready: true on every beat once a two-phase start is done, and reports answered beats', async () => {
    const t = setup(ok, true);
    stop = () => t.hb.stop();
    t.hb.start();
    await waitFor(() => t.answered.length >= 2);
    expect(t.sent.slice(0, 2)).toEqual([
      { inflight: 2, status: 'busy', ready: true },
      { inflight: 2, status: 'busy', ready: true },
    ]);
    const refused = setup(httpError(503, 'STORE_UNAVAILABLE'), true);
    await refused.hb.beat();
    expect(refused.sent).toHaveLength(1);
    expect(refused.answered).toEqual([]);
  });

  it('warns when the event loop made it late by more than 1.2×', async () => {
    const t = setup(ok);
    stop = () => t.hb.stop();
    t.hb.start();
    const until = performance.now() + 80;
    while (performance.now() < until); // a CPU-bound handler hogging the loop
    await waitFor(() => t.logs.some((l) => l.level === 40 && l.msg.startsWith('heartbeat late')));
  });

  it('404 AGENT_NOT_FOUND → onGone once and stops; 409 STALE_EPOCH → onFenced', async () => {
    const gone = setup(httpError(404, 'AGENT_NOT_FOUND'));
    gone.hb.start();
    await waitFor(() => gone.events.gone === 1);
    expect(gone.sent).toHaveLength(1);
    const fenced = setup(httpError(409, 'STALE_EPOCH'));
    fenced.hb.start();
    await waitFor(() => fenced.events.fenced === 1);
    expect(fenced.events.gone).toBe(0);
  });

  it('keeps trying through network errors and 401s, logging each', async () => {
    let n = 0;
    const t = setup(() => {
      n += 1;
      if (n === 1)
        return Promise.reject(new ReachConnectionError('POST x', false, new Error('refused')));
      if (n === 2) return httpError(401, 'UNAUTHORIZED')();
      return ok();
    });
    stop = () => t.hb.stop();
    t.hb.start();
    await waitFor(() => t.logs.some((l) => l.msg === 'heartbeat recovered'));
    expect(t.logs.some((l) => l.level === 40 && l.msg.startsWith('heartbeat failed'))).toBe(true);
    expect(t.logs.some((l) => l.level === 50 && l.msg === 'heartbeat token refused')).toBe(true);
    expect(t.events).toEqual({ gone: 0, fenced: 0 });
  });
});
