import type { Task } from '@a2a-js/sdk';
import { V1PushNotificationSerializer } from '@a2a-js/sdk/server';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import type { Logger } from 'pino';
import {
  decodeCallback,
  isFinalCallback,
  TaskRecordField,
  type ReachKeys,
} from '@agent-reach/protocol';
import { isAllowedHost } from '@agent-reach/service-kit';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { GroupReader, type GroupEntry } from '../callbacks/group-reader.ts';
import type { TaskReader } from '../tasks/task-reader.ts';
import { TenantScope } from '../tasks/tenant-scope.ts';
import { A2A_PUSH_TOPIC, type PushConfigStore, type StoredPushConfig } from './push-configs.ts';
import { isTerminalState, taskOf } from './task-mapping.ts';

/** The consumer group every router's forwarder reads the push topic in. */
export const PUSH_GROUP = 'a2a-push';

/** How a forwarder sends webhooks. */
export interface PushSendSettings {
  /** One POST's time limit. */
  timeoutMs: number;
  /** Tries per webhook, the first included. */
  attempts: number;
  /** The wait before the second try; doubled before each next one. */
  backoffMs: number;
}

/** The defaults: 5 s per try, 4 tries, 0.5 s, 1 s, then 2 s apart (at most about 24 s in all). */
export const PUSH_SEND_DEFAULTS: PushSendSettings = {
  timeoutMs: 5000,
  attempts: 4,
  backoffMs: 500,
};

/** What a forwarder works with. */
export interface PushForwarderOptions {
  /** Its own connection: the blocking group read holds it. */
  conn: RedisClient;
  /** The router's shared connection (acks, claims, reads). */
  redis: RedisClient;
  keys: ReachKeys;
  store: PushConfigStore;
  tasks: TaskReader;
  logger: Logger;
  send?: PushSendSettings;
  /** How long an item may stay unacknowledged before another router claims it. */
  claimIdleMs?: number;
  /** How long one group read blocks. */
  blockMs?: number;
  /** How long an idle callback topic is kept, seconds (REACH_CALLBACK_RETENTION_S). */
  retentionS?: () => number;
}

/**
 * Items a forwarder handles at once (their webhooks are sent in parallel): a webhook that does not
 * answer holds one place for its tries, not the others.
 */
const MAX_IN_FLIGHT = 64;

const SERIALIZERS = {
  '1.0': new V1PushNotificationSerializer(),
  '0.3': new V03PushNotificationSerializer(),
};

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * A2A push notifications (docs/A2A.md): tasks with push configs publish their final item on
 * {@link A2A_PUSH_TOPIC}; every router runs one forwarder, a consumer of one Redis consumer group
 * on that topic, so each item is handled by one router. For an item of a task with configs it
 * POSTs the final task (what GetTask answers, in the A2A push body of the config's protocol
 * version, with the config's token or credentials) to each config's URL, retrying with backoff,
 * then acknowledges the item; a task without configs is just acknowledged. Items a router left
 * unacknowledged (it stopped or died) are claimed by another after `claimIdleMs`: delivery is at
 * least once. Redirects are not followed, and a URL is checked against the host allow-list again
 * before each send.
 */
export class PushForwarder {
  readonly #key: string;
  readonly #send: PushSendSettings;
  readonly #reader: GroupReader;
  /** The entries being handled, by entry id. */
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(private readonly o: PushForwarderOptions) {
    this.#key = o.keys.callback(A2A_PUSH_TOPIC);
    this.#send = o.send ?? PUSH_SEND_DEFAULTS;
    this.#reader = new GroupReader({
      conn: o.conn,
      redis: o.redis,
      key: this.#key,
      group: PUSH_GROUP,
      logger: o.logger,
      what: 'A2A push',
      claimIdleMs: o.claimIdleMs ?? 60_000,
      blockMs: o.blockMs ?? 5000,
      retentionS: () => o.retentionS?.() ?? 7 * 24 * 3600,
      // At most MAX_IN_FLIGHT at once: wait for a place before reading more.
      room: () => MAX_IN_FLIGHT - this.#inFlight.size,
      waitForRoom: () => Promise.race(this.#inFlight.values()),
      handle: async (entries) => {
        for (const entry of entries) this.#begin(entry);
      },
    });
  }

  /** Starts the read loop (once). */
  start(): void {
    this.#reader.start();
  }

  /** Ends the loop; webhooks being sent are abandoned (their items are claimed by another router). */
  async close(): Promise<void> {
    await this.#reader.close();
    await Promise.all(this.#inFlight.values());
  }

  /** Starts handling an entry (not one already being handled here). */
  #begin(entry: GroupEntry): void {
    const id = entry[0];
    if (this.#inFlight.has(id)) return;
    const done = this.#handle(entry).finally(() => this.#inFlight.delete(id));
    this.#inFlight.set(id, done);
  }

  /** Handles an entry, then acknowledges it; one that fails stays pending (claimed later). */
  async #handle([id, fields]: GroupEntry): Promise<void> {
    try {
      if (fields) {
        const msg = decodeCallback(fields);
        if (isFinalCallback(msg)) await this.#deliver(msg.task_id);
      }
      if (!this.#reader.stopped.aborted) await this.o.redis.xack(this.#key, PUSH_GROUP, id);
    } catch (err: unknown) {
      if (!this.#reader.stopped.aborted)
        this.o.logger.warn({ err, entry: id }, 'A2A push item failed; it is retried later');
    }
  }

  /** Sends the task's final state to each of its configs' URLs. */
  async #deliver(id: string): Promise<void> {
    const configs = await this.o.store.list(id);
    if (configs.length === 0) return;
    const task = await this.#read(id);
    // Not ended after all (a failed attempt that is retried): its final item comes later.
    if (!task?.status || !isTerminalState(task.status.state)) return;
    await Promise.all(configs.map((c) => this.#post(id, task, c)));
    await this.o.store.expireWith(id, await this.o.redis.pttl(this.o.keys.task(id)));
  }

  /** The task as GetTask shows it to its own tenant. */
  async #read(id: string): Promise<Task | undefined> {
    const scope = new TenantScope(TenantScope.tenantOf(id), false);
    const taskKey = this.o.keys.task(id);
    const [view, session] = await Promise.all([
      this.o.tasks.view(id, scope),
      this.o.redis.hget(taskKey, TaskRecordField.sessionId),
    ]);
    return view ? taskOf(view, session || view.task_id) : undefined;
  }

  async #post(id: string, task: Task, stored: StoredPushConfig): Promise<void> {
    const { config } = stored;
    const log = this.o.logger.child({ task_id: id, push_config: config.id });
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      return;
    }
    if (!isAllowedHost(url.hostname, this.o.store.allowed)) {
      log.warn({ host: url.hostname }, 'A2A push not sent: the host is no longer allowed');
      return;
    }
    const serializer = stored.wireVersion === '0.3' ? SERIALIZERS['0.3'] : SERIALIZERS['1.0'];
    const { body, contentType } = serializer.serialize(
      { payload: { $case: 'task', value: task } },
      task,
    );
    const headers: Record<string, string> = { 'content-type': contentType };
    if (config.authentication?.scheme && config.authentication.credentials)
      headers.authorization = `${config.authentication.scheme} ${config.authentication.credentials}`;
    else if (config.token) headers['x-a2a-notification-token'] = config.token;
    const { attempts, backoffMs, timeoutMs } = this.#send;
    const stopped = this.#reader.stopped;
    for (let attempt = 1; attempt <= attempts && !stopped.aborted; attempt += 1) {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers,
          body,
          redirect: 'manual',
          signal: AbortSignal.any([stopped, AbortSignal.timeout(timeoutMs)]),
        });
        await res.body?.cancel().catch(() => undefined);
        if (res.ok) return;
        log.warn({ status: res.status, attempt }, 'A2A push refused');
        // A client error other than a timeout or a rate limit will not change on a retry.
        if (res.status >= 300 && res.status < 500 && res.status !== 408 && res.status !== 429)
          return;
      } catch (err: unknown) {
        if (stopped.aborted) return;
        log.warn({ err, attempt }, 'A2A push failed');
      }
      if (attempt < attempts) await sleep(backoffMs * 2 ** (attempt - 1), stopped);
    }
    if (!stopped.aborted) log.warn({ url: url.origin }, 'A2A push given up after its last try');
  }
}
