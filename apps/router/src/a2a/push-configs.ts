import { randomUUID } from 'node:crypto';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ReachKeys } from '@agent-reach/protocol';
import {
  checkOutboundUrl,
  hostRefusal,
  httpError,
  type OutboundHosts,
  type OutboundUrlProblem,
} from '@agent-reach/service-kit';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { WAIT_TOPIC_PREFIX } from '../callbacks/wait-topic.ts';
import { pushConfigSaveScript } from './push-config-save.ts';

/**
 * The callback topic of tasks the A2A gateway pushes: the push forwarder (push-forwarder.ts) of
 * every router reads it as one consumer group. A router topic (`_wait.` prefix): task views do
 * not show it and only operators may read it with `GET /v1/callbacks/:topic`.
 */
export const A2A_PUSH_TOPIC = `${WAIT_TOPIC_PREFIX}a2a-push`;

/** Most push configs one task may have. */
export const MAX_PUSH_CONFIGS = 10;

/** How long a task's configs are kept while the task has no expiry yet (it runs): 7 days. */
const PENDING_TTL_MS = 7 * 24 * 3600 * 1000;

/** A push config as stored: the A2A config and the protocol version of the call that set it. */
export interface StoredPushConfig {
  config: TaskPushNotificationConfig;
  /** `1.0` or `0.3`: the form the webhook body takes (the SDK's serializers). */
  wireVersion: string;
}

/**
 * The webhook URL of a config, checked: http or https, no credentials, and one of `allowed`'s
 * hosts (REACH_A2A_PUSH_HOSTS), or a loopback host when it allows loopback
 * (REACH_OUTBOUND_LOOPBACK). Every loopback URL is refused alike: the refusal does not depend
 * on what listens there.
 * @throws PUSH_URL_NOT_ALLOWED (403; over A2A, JSON-RPC -32602)
 */
export function allowedPushUrl(text: string, allowed: OutboundHosts): URL {
  const checked = checkOutboundUrl(text, allowed);
  if ('url' in checked) return checked.url;
  const why: Record<OutboundUrlProblem, string> = {
    not_url: `push url ${JSON.stringify(text)} is not a URL`,
    not_http: 'the push url must be an http or https URL',
    credentials: 'the push url may not carry credentials',
    host: `push url ${hostRefusal(checked.host ?? '', 'REACH_A2A_PUSH_HOSTS', allowed)}; ask the operator to allow the host`,
  };
  throw httpError('PUSH_URL_NOT_ALLOWED', why[checked.problem]);
}

/** Longest push config id, token or credentials a caller may set. */
const MAX_CONFIG_TEXT = 1024;

/** True when `value` is a push config id: a string of 1 to 1,024 printable characters. */
export function isPushConfigId(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= MAX_CONFIG_TEXT &&
    !/\p{Cc}/u.test(value)
  );
}

/**
 * Checks the caller's parts of a push config before anything is stored: `id` (when given) a
 * config id, `token` and the `authentication` scheme and credentials strings that can travel in
 * an HTTP header (printable, at most 1,024 characters), and the URL allowed by
 * {@link allowedPushUrl}.
 * @throws INVALID_PARAMS naming the field; PUSH_URL_NOT_ALLOWED
 */
export function checkPushConfig(config: TaskPushNotificationConfig, allowed: OutboundHosts): void {
  const texts: [string, unknown][] = [
    ['token', config.token],
    ['authentication.scheme', config.authentication?.scheme],
    ['authentication.credentials', config.authentication?.credentials],
  ];
  if (config.id !== undefined && config.id !== '' && !isPushConfigId(config.id))
    throw httpError('INVALID_PARAMS', 'a push config id is 1 to 1,024 printable characters');
  for (const [field, value] of texts)
    if (value !== undefined && value !== '' && !isPushConfigId(value))
      throw httpError(
        'INVALID_PARAMS',
        `push config ${field} must be 1 to 1,024 printable characters`,
      );
  if (typeof config.url !== 'string')
    throw httpError('INVALID_PARAMS', 'a push config needs a url (a string)');
  allowedPushUrl(config.url, allowed);
}

/** What the push-config store needs. */
export interface PushConfigStoreOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** Hosts a webhook may go to (REACH_A2A_PUSH_HOSTS), and whether loopback ones too. */
  allowed: OutboundHosts;
}

/**
 * A task's A2A push-notification configs in Redis (`keys.a2aPush`, under the task's hash tag),
 * kept as long as the task. Saving one also makes sure the task's final result reaches the push
 * forwarder (its callback topic becomes {@link A2A_PUSH_TOPIC} unless its caller set one).
 */
export class PushConfigStore {
  /** Where webhooks may go: checked when a config is saved, and again before each send. */
  readonly allowed: OutboundHosts;

  constructor(private readonly o: PushConfigStoreOptions) {
    this.allowed = o.allowed;
  }

  /**
   * Checks and saves `config` of task `id` (the id inside Redis), giving it an id when it has
   * none; saving a config id again replaces it.
   * @throws PUSH_URL_NOT_ALLOWED; INVALID_PARAMS past {@link MAX_PUSH_CONFIGS}
   */
  async save(
    id: string,
    config: TaskPushNotificationConfig,
    wireVersion: string,
  ): Promise<TaskPushNotificationConfig> {
    checkPushConfig(config, this.allowed);
    const saved: TaskPushNotificationConfig = { ...config, id: config.id || randomUUID() };
    const stored: StoredPushConfig = { config: saved, wireVersion };
    const ok = await this.run(id, saved.id, JSON.stringify(stored));
    if (!ok)
      throw httpError(
        'INVALID_PARAMS',
        `a task has at most ${MAX_PUSH_CONFIGS} push configs: delete one first`,
      );
    return saved;
  }

  /** Points the task's final result at the push topic if it has configs and is still running. */
  async retarget(id: string): Promise<void> {
    await this.run(id, '', '');
  }

  /** The task's configs (none when it has none or they expired). */
  async list(id: string): Promise<StoredPushConfig[]> {
    const values = await this.o.redis.hvals(this.o.keys.a2aPush(id));
    return values.flatMap((v) => {
      try {
        return [JSON.parse(v) as StoredPushConfig];
      } catch {
        return [];
      }
    });
  }

  /** One config by its id. */
  async get(id: string, configId: string): Promise<StoredPushConfig | undefined> {
    const value = await this.o.redis.hget(this.o.keys.a2aPush(id), configId);
    return value === null ? undefined : (JSON.parse(value) as StoredPushConfig);
  }

  /** Deletes one config; false when there was none of that id. */
  async delete(id: string, configId: string): Promise<boolean> {
    return (await this.o.redis.hdel(this.o.keys.a2aPush(id), configId)) > 0;
  }

  /** After the task ended: its configs expire with it (`ttlMs`, its own expiry). */
  async expireWith(id: string, ttlMs: number): Promise<void> {
    if (ttlMs > 0) await this.o.redis.pexpire(this.o.keys.a2aPush(id), ttlMs);
  }

  /** push-config-save-2.lua: saves `json` as `configId` (none for '') and retargets the task. */
  private async run(id: string, configId: string, json: string): Promise<boolean> {
    return pushConfigSaveScript.run(this.o.redis, {
      keys: { configs: this.o.keys.a2aPush(id), task: this.o.keys.task(id) },
      args: {
        configId,
        config: json,
        pushTopic: A2A_PUSH_TOPIC,
        pendingTtlMs: PENDING_TTL_MS,
        waitPrefix: WAIT_TOPIC_PREFIX,
        maxConfigs: MAX_PUSH_CONFIGS,
      },
    });
  }
}
