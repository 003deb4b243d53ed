import { freePort } from '@agent-reach/testkit';
import type { EndpointProtocol } from '@agent-reach/protocol';
import type { CallRequest, EndpointTarget } from '../endpoint-client.ts';

/** A call request whose progress and chunks are kept, and which the test can stop. */
export interface RecordedCall {
  req: CallRequest;
  progress: unknown[];
  chunks: unknown[];
  /** Aborts the request's signal with `reason` (`'cancelled'` or `'shutdown'`). */
  stop(reason?: string): void;
}

let seq = 0;

/** A call of attempt 1 of a fresh task, with `overrides`. */
export function recordedCall(overrides: Partial<CallRequest> = {}): RecordedCall {
  seq += 1;
  const controller = new AbortController();
  const progress: unknown[] = [];
  const chunks: unknown[] = [];
  const req: CallRequest = {
    taskId: `t-${process.pid}-${seq}`,
    attempt: 1,
    capability: 'demo',
    remoteName: 'demo',
    payload: {},
    deadlineMs: 0,
    signal: controller.signal,
    onProgress: (value) => void progress.push(value),
    onChunk: (value) => void chunks.push(value),
    ...overrides,
  };
  return { req, progress, chunks, stop: (reason = 'cancelled') => controller.abort(reason) };
}

/** An endpoint target of `protocol` at `url`: no headers, a 10 s timeout. */
export function endpointTarget(
  protocol: EndpointProtocol,
  url: string,
  overrides: Partial<EndpointTarget> = {},
): EndpointTarget {
  return {
    agentId: `${protocol}-demo`,
    protocol,
    url,
    timeoutMs: 10_000,
    headers: {},
    options: {},
    ...overrides,
  };
}

/** A URL on 127.0.0.1 where nothing listens (connections are refused). */
export async function refusingUrl(path = '/'): Promise<string> {
  return `http://127.0.0.1:${await freePort()}${path}`;
}
