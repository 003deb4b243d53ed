import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { WORKER_GROUP, reachKeys } from '@agent-reach/protocol';
import {
  findBinary,
  freePort,
  randomPrefix,
  startLocalCluster,
  startRedisServer,
} from '@agent-reach/process-kit';

/** Which Redis the lab runs on. */
export type Leg = 'single' | 'cluster';

/** One endpoint agent's keys, and the master that holds them. */
export interface LabAgent {
  id: string;
  inbox: string;
  /** Sharded channel in the inbox's slot: `<prefix>:{a:<id>}:wake`. */
  wake: string;
  /** Index into {@link Fleet.masters}. */
  master: number;
  /** Hash slot of the inbox on a cluster; 0 on a single Redis (one read covers every inbox). */
  slot: number;
}

/** The Redis side of the lab: masters, agents, a producer and a CPU meter per master. */
export interface Fleet {
  readonly leg: Leg;
  readonly ports: readonly number[];
  readonly agents: readonly LabAgent[];
  /** The agent whose inbox key or wake channel this is. */
  byName(name: string): LabAgent | undefined;
  /**
   * Writes one entry to the agent's inbox the way a delivery script does (one Lua call), with
   * `SPUBLISH` of its wake channel in the same call when `publish` is set. The entry carries the
   * `performance.now()` of the call in field `t`.
   */
  deliver(agent: LabAgent, publish: boolean): Promise<void>;
  /** Moves every inbox's group to its last entry, so the next relay starts with nothing unread. */
  skipUnread(): Promise<void>;
  /** `CONFIG SET notify-keyspace-events` on every master. */
  setNotify(flags: string): Promise<void>;
  /** CPU seconds (used_cpu_sys + used_cpu_user) summed over the masters. */
  cpuSeconds(): Promise<number>;
  /** Connections named `relay-…` summed over the masters (CLIENT LIST). */
  relayConnections(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * KEYS[1] inbox; ARGV[1] wake channel or '' for none, ARGV[2] sent-at. Returns the entry id.
 * The channel shares the inbox's hash tag, so on a cluster it is served by the same master.
 */
const DELIVER_LUA = `
local id = redis.call('XADD', KEYS[1], '*', 't', ARGV[2])
if ARGV[1] ~= '' then redis.call('SPUBLISH', ARGV[1], id) end
return id`;

function conn(port: number, name: string): Redis {
  return new Redis({ host: '127.0.0.1', port, connectionName: name, maxRetriesPerRequest: 1 });
}

/** Starts the leg's Redis, creates `agentCount` inboxes with their group, and opens its connections. */
export async function startFleet(leg: Leg, agentCount: number): Promise<Fleet> {
  let ports: number[];
  let slotOwner: (slot: number) => number = () => 0;
  let stopRedis: () => Promise<void>;
  if (leg === 'single') {
    const bin = findBinary('redis-server');
    if (!bin) throw new Error('redis-server not found on PATH');
    const dir = await mkdtemp(join(tmpdir(), 'reach-wakeup-'));
    const port = await freePort();
    const proc = await startRedisServer({ bin, dir, port });
    ports = [port];
    stopRedis = async () => {
      await proc.stop('SIGTERM', 5000);
      await rm(dir, { recursive: true, force: true });
    };
  } else {
    const cluster = await startLocalCluster({ masters: 3 });
    stopRedis = () => cluster.stop();
    try {
      const view = (await cluster.topology()).filter((n) => n.role === 'master');
      ports = view.map((n) => n.port);
      slotOwner = (slot) =>
        view.findIndex((n) => n.slots.some(([lo, hi]) => slot >= lo && slot <= hi));
    } catch (err: unknown) {
      await stopRedis();
      throw err;
    }
  }

  const meters = ports.map((p) => conn(p, `meter-${p}`));
  const producers = ports.map((p) => conn(p, `producer-${p}`));
  const stop = async () => {
    for (const c of [...meters, ...producers]) c.disconnect();
    await stopRedis();
  };
  try {
    // The cluster kit keeps an fsync'd AOF for failover tests; the single Redis keeps none. Turn
    // it off so both legs price the same work.
    if (leg === 'cluster')
      await Promise.all(meters.map((m) => m.config('SET', 'appendonly', 'no')));
    const keys = reachKeys(randomPrefix());
    const first = meters[0] as Redis;
    const agents: LabAgent[] = [];
    for (let i = 0; i < agentCount; i++) {
      const id = `ep-${String(i).padStart(4, '0')}`;
      const inbox = keys.inbox(id);
      const slot = leg === 'cluster' ? Number(await first.cluster('KEYSLOT', inbox)) : 0;
      agents.push({ id, inbox, wake: `${keys.agent(id)}:wake`, master: slotOwner(slot), slot });
    }
    await Promise.all(
      ports.map(async (_, m) => {
        const pipe = (producers[m] as Redis).pipeline();
        for (const a of agents)
          if (a.master === m) pipe.xgroup('CREATE', a.inbox, WORKER_GROUP, '$', 'MKSTREAM');
        await pipe.exec();
      }),
    );
    const shas = await Promise.all(
      producers.map(async (p) => String(await p.script('LOAD', DELIVER_LUA))),
    );
    const names = new Map<string, LabAgent>();
    for (const a of agents) names.set(a.inbox, a).set(a.wake, a);

    return {
      leg,
      ports,
      agents,
      byName: (name) => names.get(name),
      async deliver(agent, publish) {
        const p = producers[agent.master] as Redis;
        const sha = shas[agent.master] as string;
        await p.evalsha(sha, 1, agent.inbox, publish ? agent.wake : '', String(performance.now()));
      },
      async skipUnread() {
        await Promise.all(
          ports.map(async (_, m) => {
            const pipe = (producers[m] as Redis).pipeline();
            for (const a of agents)
              if (a.master === m) pipe.xgroup('SETID', a.inbox, WORKER_GROUP, '$');
            await pipe.exec();
          }),
        );
      },
      async setNotify(flags) {
        await Promise.all(meters.map((m) => m.config('SET', 'notify-keyspace-events', flags)));
      },
      async cpuSeconds() {
        const infos = await Promise.all(meters.map((m) => m.info('cpu')));
        let total = 0;
        for (const info of infos) {
          const sys = /used_cpu_sys:([\d.]+)/.exec(info)?.[1];
          const user = /used_cpu_user:([\d.]+)/.exec(info)?.[1];
          total += Number(sys) + Number(user);
        }
        return total;
      },
      async relayConnections() {
        const lists = await Promise.all(meters.map((m) => m.client('LIST')));
        let n = 0;
        for (const list of lists) n += (String(list).match(/ name=relay-/g) ?? []).length;
        return n;
      },
      stop,
    };
  } catch (err: unknown) {
    await stop();
    throw err;
  }
}
