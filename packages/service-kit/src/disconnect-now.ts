import { Cluster, type Redis } from 'ioredis';

/** What ioredis 5 runs when a connection closes for good: private, so typed here. */
interface Endable {
  setStatus(status: 'end'): void;
  flushQueue(error: Error): void;
}

/** The message ioredis rejects a command with when its connection closed for good. */
const CLOSED = 'Connection is closed.';

/**
 * Closes `client` at once, like `disconnect()`, and rejects every command it still holds. A
 * connection waiting to reconnect (Redis unreachable, or its user gone) needs the second part:
 * ioredis 5's `disconnect()` then clears the reconnect timer but never runs its close handler
 * (redis/ioredis#2169), so the commands in its offline queue stay pending for ever, and so does a
 * loop awaiting one (a blocking read that a stop cuts by disconnecting).
 */
export function disconnectNow(client: Redis | Cluster): void {
  const connections: Redis[] = client instanceof Cluster ? client.nodes('all') : [client];
  const waiting = connections.filter((c) => c.status === 'reconnecting');
  client.disconnect();
  for (const c of waiting) if (c.status === 'reconnecting') end(c);
}

function end(connection: Redis): void {
  const c = connection as unknown as Partial<Endable>;
  if (typeof c.setStatus !== 'function' || typeof c.flushQueue !== 'function') return;
  c.setStatus('end');
  c.flushQueue(new Error(CLOSED));
}
