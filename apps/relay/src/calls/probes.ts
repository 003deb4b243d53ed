import { connect } from 'node:net';

/** Longest a health GET or card fetch may take when the caller's signal allows longer. */
export const PROBE_GET_TIMEOUT_MS = 5_000;
/** Longest a TCP connect probe may take. */
export const PROBE_CONNECT_TIMEOUT_MS = 1_000;

/**
 * GETs `url` with `headers` (redirects not followed) and tells whether the status is one
 * `accept` takes; false for any error, or when `signal` aborts or {@link PROBE_GET_TIMEOUT_MS}
 * passes first.
 */
export async function probeGet(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  accept: (status: number) => boolean,
): Promise<boolean> {
  try {
    const res = await fetch(url, {
      headers,
      redirect: 'manual',
      signal: AbortSignal.any([signal, AbortSignal.timeout(PROBE_GET_TIMEOUT_MS)]),
    });
    // Read the body so the connection goes back to the pool.
    await res.arrayBuffer();
    return accept(res.status);
  } catch {
    return false;
  }
}

/** True for a 2xx status. */
export const is2xx = (status: number): boolean => status >= 200 && status < 300;

/**
 * Opens a TCP connection to the host and port of `url` (80 or 443 when it names none) and
 * closes it at once: true when it connected within {@link PROBE_CONNECT_TIMEOUT_MS}.
 */
export function probeTcp(url: string, signal: AbortSignal): Promise<boolean> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(false);
  }
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  // An IPv6 literal comes bracketed in a URL, bare to net.connect.
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const socket = connect({ host, port });
    const done = (alive: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(alive);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(false), PROBE_CONNECT_TIMEOUT_MS);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
