import { ReachConnectionError, ReachHttpError } from '../errors.ts';

/** One JSON request. */
export interface JsonRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: unknown;
  /** Sent as `Authorization: Bearer <token>` (an API key or an agent's token). */
  token?: string | undefined;
  /** The request fails with a {@link ReachConnectionError} (`timedOut`) after this long. */
  timeoutMs: number;
  /** Cancels the request (it then rejects with the signal's reason). */
  signal?: AbortSignal;
  /** Sent as the W3C `traceparent` header: the server's span is then its child. */
  traceparent?: string | undefined;
}

/** A JSON reply with any status. */
export interface JsonReply {
  status: number;
  /** Parsed JSON, or the raw text when the body was not JSON. */
  body: unknown;
}

/**
 * Sends one request with Node's fetch. Rejects with a {@link ReachConnectionError} when no
 * answer came back; resolves with the status and body otherwise (the caller decides what a
 * status means).
 */
export async function requestJson(req: JsonRequest): Promise<JsonReply> {
  const label = `${req.method} ${req.url}`;
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal === undefined ? timeout : AbortSignal.any([timeout, req.signal]);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (req.token !== undefined) headers['authorization'] = `Bearer ${req.token}`;
  if (req.traceparent !== undefined) headers['traceparent'] = req.traceparent;
  try {
    const res = await fetch(req.url, {
      method: req.method,
      headers,
      body: req.body === undefined ? null : JSON.stringify(req.body),
      signal,
    });
    const text = await res.text();
    let body: unknown = text;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON (a proxy's HTML error page, say): keep the text for the error report.
      }
    }
    return { status: res.status, body };
  } catch (err: unknown) {
    if (req.signal?.aborted === true) throw req.signal.reason;
    throw new ReachConnectionError(label, timeout.aborted, err);
  }
}

/** Like {@link requestJson} but rejects with a {@link ReachHttpError} unless the status is 2xx. */
export async function requestOk(req: JsonRequest): Promise<unknown> {
  const reply = await requestJson(req);
  if (reply.status < 200 || reply.status > 299)
    throw new ReachHttpError(`${req.method} ${req.url}`, reply.status, reply.body);
  return reply.body;
}

/** Joins a base URL and a path, keeping any path prefix the base has. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}
