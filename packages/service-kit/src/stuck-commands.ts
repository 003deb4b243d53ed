/** The error a stuck command fails with; `isRedisUnavailable` knows it (ioredis' own text). */
const timedOut = (): Error => new Error('Command timed out');

/** What {@link watchStuckCommands} reads and calls on an ioredis connection. */
export interface WatchedConnection {
  readonly status: string;
  /** Commands written and not answered yet, oldest first (ioredis keeps it public). */
  readonly commandQueue: { peekFront(): { command: object } | undefined };
  /** The socket, once there is one. */
  readonly stream?: { destroy(): void } | undefined;
  /** ioredis' own way out of a broken connection: fail the queues, then reconnect. */
  recoverFromFatalError(
    commandError: Error,
    err: Error,
    options: { offlineQueue?: boolean; commandQueue?: boolean },
  ): void;
  on(event: 'ready', listener: () => void): unknown;
  once(event: 'end', listener: () => void): unknown;
}

/** What ioredis keeps private and this reads or calls if it is there. */
interface Internals {
  /** Commands issued while not connected; replaced when they are sent. */
  offlineQueue?: WatchedConnection['commandQueue'];
  flushQueue?(err: Error, options: { offlineQueue?: boolean; commandQueue?: boolean }): void;
}

/** The oldest command of one queue, and since when it has been the oldest. */
class Oldest {
  private command: object | undefined;
  private since = 0;

  constructor(private readonly timeoutMs: number) {}

  /** True once the same command has been the oldest for `timeoutMs`. */
  stuck(command: object | undefined, now: number): boolean {
    if (command !== this.command) {
      this.command = command;
      this.since = now;
      return false;
    }
    return command !== undefined && now - this.since >= this.timeoutMs;
  }

  forget(): void {
    this.command = undefined;
  }
}

/**
 * Fails the commands of a connection that Redis stopped answering (a frozen server accepts
 * connections and writes but answers nothing), as ioredis' `commandTimeout` does, without its
 * timer per command: a check every `timeoutMs / 8` looks at the oldest command in flight and the
 * oldest waiting to be sent. One that has stayed oldest for `timeoutMs` means Redis answered
 * nothing on this connection for that long: the commands in flight fail with "Command timed out"
 * and the connection is closed at once and made again (ioredis `recoverFromFatalError`, so a late
 * reply can never be taken for another command's). Until the new connection is ready, commands
 * waiting for it fail at the next check: Redis is known not to answer. A check that runs late —
 * this process was stalled, or the event loop blocked — judges nothing: the replies may be
 * sitting unread in the socket. The check stops when the connection ends. Not for a connection
 * that runs blocking commands (`BLOCK`, `BLPOP`…): their wait would read as Redis not answering.
 *
 * @param now - the clock, monotonic ms (tests give their own)
 * @returns a function that stops the check
 */
export function watchStuckCommands(
  conn: WatchedConnection,
  timeoutMs: number,
  now: () => number = () => performance.now(),
): () => void {
  const internals = conn as unknown as Internals;
  const intervalMs = Math.min(250, Math.max(20, Math.round(timeoutMs / 8)));
  const inflight = new Oldest(timeoutMs);
  const waiting = new Oldest(timeoutMs);
  /** Set by a stuck command, cleared when a connection is ready again. */
  let unanswered = false;
  let last = now();
  const failWaiting = () => {
    const err = timedOut();
    if (internals.flushQueue) internals.flushQueue(err, { commandQueue: false });
    else conn.recoverFromFatalError(err, err, { commandQueue: false });
  };
  const check = () => {
    const at = now();
    const late = at - last > 2 * intervalMs;
    last = at;
    const ready = conn.status === 'ready';
    if (late) {
      inflight.forget();
      waiting.forget();
    } else if (inflight.stuck(conn.commandQueue.peekFront()?.command, at)) {
      unanswered = true;
      const err = timedOut();
      conn.recoverFromFatalError(err, err, { offlineQueue: !ready });
      // A frozen server never completes a graceful close: close now, so reconnecting starts.
      conn.stream?.destroy();
      inflight.forget();
      waiting.forget();
    } else if (!ready) {
      const oldest = internals.offlineQueue?.peekFront()?.command;
      if (oldest && (unanswered || waiting.stuck(oldest, at))) {
        unanswered = true;
        failWaiting();
        waiting.forget();
      }
    }
  };
  const timer = setInterval(check, intervalMs);
  timer.unref();
  conn.on('ready', () => {
    unanswered = false;
  });
  const stop = () => clearInterval(timer);
  conn.once('end', stop);
  return stop;
}

/** The two client types {@link watchClientStuckCommands} takes (ioredis' Redis and Cluster). */
interface NodesOfCluster {
  nodes(role: 'all'): WatchedConnection[];
  on(event: '+node', listener: (node: WatchedConnection) => void): unknown;
}

/**
 * {@link watchStuckCommands} for either client type: on a Cluster client, each node's connection
 * is watched from when the client adds it (a failed-over or resharded cluster adds new ones).
 * A connection's check stops when it ends.
 */
export function watchClientStuckCommands(
  client: WatchedConnection | NodesOfCluster,
  timeoutMs: number,
): void {
  if (!('nodes' in client) || typeof client.nodes !== 'function') {
    watchStuckCommands(client as WatchedConnection, timeoutMs);
    return;
  }
  const cluster = client;
  const watched = new WeakSet<WatchedConnection>();
  const watch = (node: WatchedConnection) => {
    if (watched.has(node)) return;
    watched.add(node);
    watchStuckCommands(node, timeoutMs);
  };
  for (const node of cluster.nodes('all')) watch(node);
  cluster.on('+node', watch);
}
