/**
 * Every setting of Agent-Reach, written once: one table per scope (shared by both services, the
 * router's, registry-sync's, the clients'), from which the options types, the defaults, the
 * environment schemas and parsers, the published set and docs/SETTINGS.md are derived.
 */
export * from './settings/define.ts';
export * from './settings/formats.ts';
export * from './settings/shared.ts';
export * from './settings/router.ts';
export * from './settings/registry.ts';
export * from './settings/relay.ts';
export * from './settings/client.ts';
export * from './settings/published.ts';

/** `options` without the keys whose value is `undefined`: what an environment actually set. */
export function setOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
