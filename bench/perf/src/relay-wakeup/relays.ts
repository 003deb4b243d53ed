import { Redis } from 'ioredis';
import { WORKER_GROUP } from '@agent-reach/protocol';
import type { Fleet, LabAgent } from './fleet.ts';

/** The wake-ups compared: (a) keyspace notifications, (b) sharded pub/sub, (c) polling. */
export type Candidate = 'notify' | 'spublish' | 'poll-10ms' | 'poll-50ms';

/** A relay's read side for the lab: it reads inboxes and reports each entry's `t` field. */
export interface LabRelay {
  /** Whether a wake-up reads the inbox; off, wakes are only counted (to price the wake alone). */
  reading: boolean;
  /** Wake-ups received (messages for an agent of the fleet). */
  readonly wakes: number;
  close(): Promise<void>;
}

const CONSUMER = 'relay';
const COUNT = 100;

function conn(port: number, name: string): Redis {
  return new Redis({ host: '127.0.0.1', port, connectionName: name, maxRetriesPerRequest: 1 });
}

/** Calls `onEntry` with the sent-at time of each entry of an XREADGROUP reply. */
function forEachEntry(reply: unknown, onEntry: (sentAt: number) => void): void {
  if (!Array.isArray(reply)) return;
  for (const stream of reply as Array<[string, Array<[string, string[]]>]>) {
    for (const [, fields] of stream[1]) {
      const at = fields.indexOf('t');
      if (at >= 0) onEntry(Number(fields[at + 1]));
    }
  }
}

/**
 * (a) and (b): one subscriber and one reader connection per master. A wake names one agent; its
 * inbox is read with a non-blocking XREADGROUP, and a wake that arrives during that read gets
 * one more read after it.
 */
export async function startWakeRelay(
  fleet: Fleet,
  kind: 'notify' | 'spublish',
  onEntry: (sentAt: number) => void,
): Promise<LabRelay> {
  const subs = fleet.ports.map((p) => conn(p, `relay-sub-${p}`));
  const readers = fleet.ports.map((p) => conn(p, `relay-read-${p}`));
  const busy = new Map<LabAgent, boolean>(); // agent → read in flight; true: read again after it
  let wakes = 0;
  const relay: LabRelay = {
    reading: true,
    get wakes() {
      return wakes;
    },
    async close() {
      for (const c of [...subs, ...readers]) c.disconnect();
      if (kind === 'notify') await fleet.setNotify('');
    },
  };
  const read = async (agent: LabAgent): Promise<void> => {
    busy.set(agent, false);
    const r = readers[agent.master] as Redis;
    const reply = await r.xreadgroup(
      'GROUP',
      WORKER_GROUP,
      CONSUMER,
      'COUNT',
      COUNT,
      'STREAMS',
      agent.inbox,
      '>',
    );
    forEachEntry(reply, onEntry);
    if (busy.get(agent) === true) return read(agent);
    busy.delete(agent);
  };
  const wake = (name: string) => {
    const agent = fleet.byName(name);
    if (!agent) return;
    wakes++;
    if (!relay.reading) return;
    if (busy.has(agent)) busy.set(agent, true);
    else read(agent).catch(() => busy.delete(agent));
  };

  await Promise.all([...subs, ...readers].map((c) => c.ping()));
  if (kind === 'notify') {
    // `E` keyevent, `t` stream commands: one message per XADD, on the master that ran it.
    await fleet.setNotify('Et');
    for (const s of subs) s.on('message', (_channel: string, key: string) => wake(key));
    await Promise.all(subs.map((s) => s.subscribe('__keyevent@0__:xadd')));
  } else {
    for (const s of subs) s.on('smessage', (channel: string) => wake(channel));
    // One channel a command: on a cluster the channels of one SSUBSCRIBE must share a slot.
    await Promise.all(fleet.agents.map((a) => (subs[a.master] as Redis).ssubscribe(a.wake)));
  }
  return relay;
}

/**
 * (c) One connection per master; every `intervalMs` it sends one non-blocking XREADGROUP per
 * hash slot its agents' inboxes use (a single Redis takes all of them in one command), pipelined.
 */
export async function startPollRelay(
  fleet: Fleet,
  intervalMs: number,
  onEntry: (sentAt: number) => void,
): Promise<LabRelay> {
  const groups = new Map<string, LabAgent[]>(); // "<master>/<slot>" → agents
  for (const a of fleet.agents) {
    const k = `${a.master}/${a.slot}`;
    groups.set(k, [...(groups.get(k) ?? []), a]);
  }
  let closing = false;
  const conns = fleet.ports.map((p) => conn(p, `relay-poll-${p}`));
  await Promise.all(conns.map((c) => c.ping()));
  const loops = conns.map(async (c, m) => {
    const mine = [...groups.values()].filter((g) => g[0]?.master === m);
    try {
      while (!closing) {
        const started = performance.now();
        const pipe = c.pipeline();
        for (const g of mine) {
          pipe.xreadgroup(
            'GROUP',
            WORKER_GROUP,
            CONSUMER,
            'COUNT',
            COUNT,
            'STREAMS',
            ...g.map((a) => a.inbox),
            ...g.map(() => '>'),
          );
        }
        for (const [err, reply] of (await pipe.exec()) ?? [])
          if (!err) forEachEntry(reply, onEntry);
        const wait = intervalMs - (performance.now() - started);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    } finally {
      c.disconnect();
    }
  });
  return {
    reading: true,
    wakes: 0,
    async close() {
      closing = true;
      await Promise.all(loops);
    },
  };
}

/** Starts the relay side of one candidate. */
export async function startRelay(
  fleet: Fleet,
  candidate: Candidate,
  onEntry: (sentAt: number) => void,
): Promise<LabRelay> {
  switch (candidate) {
    case 'notify':
    case 'spublish':
      return startWakeRelay(fleet, candidate, onEntry);
    case 'poll-10ms':
      return startPollRelay(fleet, 10, onEntry);
    case 'poll-50ms':
      return startPollRelay(fleet, 50, onEntry);
  }
}
