/** How a router's own topic for waited submissions (`POST /v1/tasks?wait_ms=`) begins. */
export const WAIT_TOPIC_PREFIX = '_wait.';

/**
 * True for a router's wait topic: its results are handed to the waiting requests of every
 * tenant, so the API never shows it in a task view, and only operators may read it.
 */
export function isWaitTopic(topic: string): boolean {
  return topic.startsWith(WAIT_TOPIC_PREFIX);
}
