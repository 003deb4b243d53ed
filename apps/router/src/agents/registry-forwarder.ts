import { httpError } from '@agent-reach/service-kit';

/** How long registry-sync has to answer a forwarded call before 502 REGISTRY_UNAVAILABLE. */
export const REGISTRY_FORWARD_TIMEOUT_MS = 5000;

/** What a {@link RegistryForwarder} needs. */
export interface RegistryForwarderOptions {
  /** registry-sync's base URL (REACH_REGISTRY_URL); unset or '': every call is 503 REGISTRY_NOT_CONFIGURED. */
  url: string | undefined;
  /** @default REGISTRY_FORWARD_TIMEOUT_MS */
  timeoutMs?: number;
}

/** registry-sync's answer, passed on as it came. */
export interface ForwardedReply {
  status: number;
  body: unknown;
}

/** True for the API's error reply: `{error, message}`. */
function isErrorReply(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const { error, message } = body as Record<string, unknown>;
  return typeof error === 'string' && typeof message === 'string';
}

/**
 * Sends a call the router takes for registry-sync (which alone writes registry state) on to it,
 * with the caller's own key as the bearer, so registry-sync checks it again as it would have
 * checked a direct call. Anything but registry-sync's JSON (no connection, a timeout, a proxy's
 * error page) is 502 REGISTRY_UNAVAILABLE.
 */
export class RegistryForwarder {
  private readonly base: string | undefined;
  private readonly timeoutMs: number;

  constructor(o: RegistryForwarderOptions) {
    this.base = o.url ? o.url.replace(/\/+$/, '') : undefined;
    this.timeoutMs = o.timeoutMs ?? REGISTRY_FORWARD_TIMEOUT_MS;
  }

  /** POSTs `body` (none when undefined) to `path` of registry-sync with `key` as the bearer. */
  async post(path: string, key: string | undefined, body: unknown): Promise<ForwardedReply> {
    if (this.base === undefined)
      throw httpError(
        'REGISTRY_NOT_CONFIGURED',
        'this router does not know where registry-sync is: set REACH_REGISTRY_URL',
      );
    const headers: Record<string, string> = { accept: 'application/json' };
    if (key !== undefined) headers['authorization'] = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let status: number;
    let text: string;
    try {
      const res = await fetch(`${this.base}${path}`, {
        method: 'POST',
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      text = await res.text();
    } catch (err: unknown) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      throw httpError(
        'REGISTRY_UNAVAILABLE',
        timedOut
          ? `registry-sync did not answer within ${this.timeoutMs} ms`
          : 'registry-sync could not be reached at REACH_REGISTRY_URL',
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const ok = status >= 200 && status < 300;
    if (typeof parsed !== 'object' || parsed === null || (!ok && !isErrorReply(parsed)))
      throw httpError(
        'REGISTRY_UNAVAILABLE',
        `registry-sync answered ${status} without the API's JSON (a proxy in the way?)`,
      );
    return { status, body: parsed };
  }
}
