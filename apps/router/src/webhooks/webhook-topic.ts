import { WAIT_TOPIC_PREFIX } from '../callbacks/wait-topic.ts';

/**
 * The callback topic of tasks submitted with `callback_url`: their final results (and with
 * `stream: true` their progress and chunks) go here, once each, and every router's webhook
 * forwarder reads it as one consumer group. A router topic (`_wait.` prefix): task views do not
 * show it. The caller's own topic, kept with the task's webhook target, gets each item from there.
 */
export const WEBHOOK_TOPIC = `${WAIT_TOPIC_PREFIX}webhooks`;

/** The consumer group every router's webhook forwarder reads {@link WEBHOOK_TOPIC} in. */
export const WEBHOOK_GROUP = 'webhooks';
