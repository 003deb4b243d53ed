import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { watchStuckCommands, type WatchedConnection } from './stuck-commands.ts';

/** A connection with queues the test fills, recording what the check does to it. */
class FakeConnection implements WatchedConnection {
  status = 'ready';
  readonly inflight: object[] = [];
  readonly offline: object[] = [];
  /** What was failed, in order: `recover` (ioredis' recoverFromFatalError), `flush`, `destroy`. */
  readonly done: string[] = [];
  private readonly listeners = new Map<string, () => void>();
  readonly commandQueue = {
    peekFront: () => (this.inflight[0] ? { command: this.inflight[0] } : undefined),
  };
  readonly stream = { destroy: () => this.done.push('destroy') };
  get offlineQueue() {
    return { peekFront: () => (this.offline[0] ? { command: this.offline[0] } : undefined) };
  }
  recoverFromFatalError(_commandError: Error, err: Error, options: object): void {
    this.done.push(`recover ${err.message} ${JSON.stringify(options)}`);
  }
  flushQueue(err: Error, options: object): void {
    this.done.push(`flush ${err.message} ${JSON.stringify(options)}`);
    this.offline.length = 0;
  }
  on(event: 'ready', listener: () => void): void {
    this.listeners.set(event, listener);
  }
  once(event: 'end', listener: () => void): void {
    this.listeners.set(event, listener);
  }
  emit(event: 'ready' | 'end'): void {
    this.listeners.get(event)?.();
  }
}

const RECOVER_INFLIGHT = 'recover Command timed out {"offlineQueue":false}';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('watchStuckCommands', () => {
  it('fails the commands in flight and closes the connection once the oldest has had no answer for the timeout', () => {
    const conn = new FakeConnection();
    watchStuckCommands(conn, 800);
    conn.inflight.push({});
    vi.advanceTimersByTime(700);
    expect(conn.done).toEqual([]);
    vi.advanceTimersByTime(300);
    expect(conn.done).toEqual([RECOVER_INFLIGHT, 'destroy']);
  });

  it('lets a connection be whose oldest command keeps changing (Redis answers)', () => {
    const conn = new FakeConnection();
    watchStuckCommands(conn, 800);
    for (let i = 0; i < 40; i++) {
      conn.inflight.shift();
      conn.inflight.push({}, {});
      vi.advanceTimersByTime(100);
    }
    expect(conn.done).toEqual([]);
  });

  it('fails the waiting commands too when a new connection’s handshake gets no answer', () => {
    const conn = new FakeConnection();
    watchStuckCommands(conn, 800);
    conn.status = 'connect';
    conn.inflight.push({});
    vi.advanceTimersByTime(1000);
    expect(conn.done).toEqual(['recover Command timed out {"offlineQueue":true}', 'destroy']);
  });

  it('fails commands waiting for a connection that is not made', () => {
    const conn = new FakeConnection();
    watchStuckCommands(conn, 800);
    conn.status = 'connecting';
    conn.offline.push({});
    vi.advanceTimersByTime(700);
    expect(conn.done).toEqual([]);
    vi.advanceTimersByTime(300);
    expect(conn.done).toEqual(['flush Command timed out {"commandQueue":false}']);
  });

  it('once Redis did not answer, fails waiting commands at the next check until a connection is ready', () => {
    const conn = new FakeConnection();
    watchStuckCommands(conn, 800);
    conn.inflight.push({});
    vi.advanceTimersByTime(1000);
    conn.inflight.length = 0;
    conn.done.length = 0;
    conn.status = 'reconnecting';
    conn.offline.push({});
    vi.advanceTimersByTime(100);
    expect(conn.done).toEqual(['flush Command timed out {"commandQueue":false}']);
    conn.emit('ready');
    conn.status = 'connecting';
    conn.offline.push({});
    vi.advanceTimersByTime(500);
    expect(conn.done).toHaveLength(1);
  });

  it('judges nothing after a check that ran late (this process was stalled)', () => {
    const conn = new FakeConnection();
    let stalledMs = 0;
    watchStuckCommands(conn, 800, () => performance.now() + stalledMs);
    conn.inflight.push({});
    vi.advanceTimersByTime(700);
    // The event loop was blocked for 2 s: the answer may be in the socket, unread.
    stalledMs = 2000;
    vi.advanceTimersByTime(100);
    expect(conn.done).toEqual([]);
    // From then on it counts again.
    vi.advanceTimersByTime(700);
    expect(conn.done).toEqual([]);
    vi.advanceTimersByTime(200);
    expect(conn.done).toEqual([RECOVER_INFLIGHT, 'destroy']);
  });

  it('stops when the connection ends', () => {
    const conn = new FakeConnection();
    watchStuckCommands(conn, 800);
    conn.emit('end');
    conn.inflight.push({});
    vi.advanceTimersByTime(5000);
    expect(conn.done).toEqual([]);
  });
});
