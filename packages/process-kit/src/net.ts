import { createServer, connect } from 'node:net';
import { randomBytes, randomInt } from 'node:crypto';

/**
 * Ports handed out for listeners: below Linux' ephemeral range (32768–60999 by default), which
 * every outgoing connection and every `listen(0)` draws from. A port the OS picked for
 * `listen(0)` can be taken by a client socket of any process before the child it was meant for
 * binds it; one from here only by another listener picking the same of 12,768 ports.
 */
const LISTEN_LOW = 20_000;
const LISTEN_HIGH = 32_768;

/** A port the OS picks (`listen(0)`), free a moment ago. */
function osPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a server a test or the bench starts:
 * a random one below the ephemeral range, or the OS's pick if a few of those are taken.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = LISTEN_LOW + randomInt(LISTEN_HIGH - LISTEN_LOW);
    if (await isPortFree(port)) return port;
  }
  return osPort();
}

/** True when `err` says a server lost the race for its port (Node, redis-server, influxd, nginx). */
export function portTaken(err: unknown): boolean {
  return /address already in use|bind:|EADDRINUSE/i.test(String(err));
}

/**
 * Starts a server on a port from {@link freePort}, and starts it again on another port when the
 * first was taken before the server could bind it (it was free when picked). `start` throws with
 * the server's output when the server exits; other failures are not retried.
 */
export async function onFreePort<T>(
  what: string,
  start: (port: number) => Promise<T>,
  attempts = 3,
): Promise<{ port: number; started: T }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { port, started: await start(port) };
    } catch (err: unknown) {
      if (attempt >= attempts || !portTaken(err)) throw err;
      process.stderr.write(
        `${what}: port ${port} was taken before it could listen; trying another\n`,
      );
    }
  }
}

/** True when nothing accepts connections on `127.0.0.1:port` and we can bind it. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A key prefix unique to one test, valid for `reachKeys(prefix)` (letters, digits and `_.:-`, at
 * most 64 characters), e.g. `t:k3j9x0a1b2c3d4e5`.
 */
export function randomPrefix(): string {
  return `t:${Date.now().toString(36)}${randomBytes(6).toString('hex')}`;
}

/** The HTTP status of `GET url`, or `undefined` when the request fails or takes over 2 s. */
export async function httpStatus(url: string, init?: RequestInit): Promise<number | undefined> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

/** Sends PING to a Redis on `host:port` with a raw socket; true on `+PONG`. */
export function redisPing(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    let reply = '';
    const finish = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}
