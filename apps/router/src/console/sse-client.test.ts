import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { compareStreamIds, SseClient } from './sse-client.ts';

/** A stand-in for a ServerResponse: what is written, and a settable unread backlog. */
function fakeResponse() {
  const written: string[] = [];
  const fake = Object.assign(new EventEmitter(), {
    writableLength: 0,
    writableEnded: false,
    writeHead: () => fake,
    write: (chunk: string) => written.push(chunk) > 0,
    end: () => {
      fake.writableEnded = true;
    },
  });
  return {
    res: fake as unknown as ServerResponse,
    written,
    setBacklog: (n: number) => (fake.writableLength = n),
  };
}

describe('compareStreamIds', () => {
  it('orders by time, then sequence, numerically', () => {
    expect(compareStreamIds('10-0', '9-5')).toBeGreaterThan(0);
    expect(compareStreamIds('10-2', '10-10')).toBeLessThan(0);
    expect(compareStreamIds('7-1', '7-1')).toBe(0);
  });
});

describe('SseClient', () => {
  it('writes events once, in id order, as one data line of JSON', () => {
    const { res, written } = fakeResponse();
    const client = new SseClient({ res, maxBufferedBytes: 1024, onGone: () => undefined });
    client.start(2000);
    client.send('5-0', { kind: 'registered', text: 'line\nbreak' });
    client.send('4-0', { kind: 'old' });
    client.send('5-0', { kind: 'again' });
    client.ping();
    expect(written).toEqual([
      'retry: 2000\n\n',
      'id: 5-0\ndata: {"kind":"registered","text":"line\\nbreak"}\n\n',
      ': ping\n\n',
    ]);
  });

  it('disconnects a client that reads too slowly', () => {
    const { res, written, setBacklog } = fakeResponse();
    const gone: SseClient[] = [];
    const client = new SseClient({ res, maxBufferedBytes: 100, onGone: (c) => gone.push(c) });
    setBacklog(101);
    client.send('1-0', { kind: 'x' });
    expect(written).toEqual([]);
    expect(client.isOpen).toBe(false);
    expect(gone).toEqual([client]);
  });
});
