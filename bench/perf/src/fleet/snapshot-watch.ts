import { Redis } from 'ioredis';
import { decodeFleetEvent, type ReachKeys } from '@agent-reach/protocol';

/** What routers were sent over a window: snapshot versions, full writes and deltas, in bytes. */
export interface SnapshotTraffic {
  /** Versions announced on the snapshot channel. */
  versions: number;
  /** Full snapshots seen written (a version found in the snapshot key). */
  fullWrites: number;
  /** Their bytes (`STRLEN` of the key at that version). */
  fullBytes: number;
  /** Delta entries seen (`keys.snapshotDeltas()`, when the deployment writes them). */
  deltas: number;
  /** Their bytes: every field name and value. */
  deltaBytes: number;
  /** The last full snapshot's size, and its agents' count, for bytes per agent. */
  lastFullBytes: number;
}

const empty = (): SnapshotTraffic => ({
  versions: 0,
  fullWrites: 0,
  fullBytes: 0,
  deltas: 0,
  deltaBytes: 0,
  lastFullBytes: 0,
});

/** The delta stream's key, when this build of the protocol has one. */
export function deltaKey(keys: ReachKeys): string | undefined {
  const k = keys as Partial<Record<'snapshotDeltas', () => string>>;
  return typeof k.snapshotDeltas === 'function' ? k.snapshotDeltas() : undefined;
}

/**
 * Subscribes to the snapshot channel and, for each announced version, reads the size of what a
 * router would fetch: the snapshot key when it holds that version (a full write), and the
 * version's entry in the delta stream when there is one. Versions announced faster than they
 * are read are counted, their bytes only when the key still holds them (the figures are a floor).
 */
export class SnapshotWatch {
  private sub: Redis;
  private counting = empty();
  private lastFullVersion = 0;
  private readonly deltas: string | undefined;

  constructor(
    redisUrl: string,
    private readonly admin: Redis,
    private readonly keys: ReachKeys,
  ) {
    this.sub = new Redis(redisUrl, { maxRetriesPerRequest: null });
    this.deltas = deltaKey(keys);
  }

  /** Whether the deployment writes deltas (the key exists in this protocol build). */
  get hasDeltas(): boolean {
    return this.deltas !== undefined;
  }

  async start(): Promise<void> {
    this.sub.on('message', (_channel: string, version: string) => {
      void this.onVersion(Number(version));
    });
    await this.sub.subscribe(this.keys.snapshotChannel());
  }

  /** Returns the traffic since the last call and starts counting afresh. */
  take(): SnapshotTraffic {
    const t = this.counting;
    this.counting = { ...empty(), lastFullBytes: t.lastFullBytes };
    return t;
  }

  async close(): Promise<void> {
    this.sub.disconnect();
    await Promise.resolve();
  }

  private async onVersion(version: number): Promise<void> {
    const c = this.counting;
    c.versions++;
    try {
      const pipe = this.admin.pipeline();
      pipe.getrange(this.keys.snapshot(), 0, 40);
      pipe.strlen(this.keys.snapshot());
      if (this.deltas) pipe.xrange(this.deltas, `${version}-0`, `${version}-0`);
      const res = (await pipe.exec()) ?? [];
      const got = res[0]?.[1];
      const head = typeof got === 'string' ? got : '';
      const bytes = Number(res[1]?.[1] ?? 0);
      const full = Number(/"version":(\d+)/.exec(head)?.[1] ?? 0);
      if (full > this.lastFullVersion) {
        this.lastFullVersion = full;
        c.fullWrites++;
        c.fullBytes += bytes;
        c.lastFullBytes = bytes;
      }
      const entries = (res[2]?.[1] ?? []) as [string, string[]][];
      for (const [, fields] of entries) {
        c.deltas++;
        for (const f of fields) c.deltaBytes += Buffer.byteLength(f);
      }
    } catch {
      // the session is going away
    }
  }
}

/** Status changes in the fleet event stream from `sinceMs` (Redis time) on. */
export async function statusChangesSince(
  admin: Redis,
  keys: ReachKeys,
  sinceMs: number,
): Promise<number> {
  let n = 0;
  let start = `${sinceMs}-0`;
  for (;;) {
    const page = (await admin.xrange(keys.fleetEvents(), start, '+', 'COUNT', 1000)) as [
      string,
      string[],
    ][];
    for (const [, fields] of page) if (decodeFleetEvent(fields)?.kind === 'status') n++;
    const last = page.at(-1);
    if (page.length < 1000 || !last) return n;
    start = `(${last[0]}`;
  }
}

/** Redis server time, epoch ms. */
export async function redisNowMs(admin: Redis): Promise<number> {
  const [s, us] = await admin.time();
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}
