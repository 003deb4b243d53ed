/**
 * A per-capability setting (`REACH_EXEC_LEASE_MS_BY_CAPABILITY`, `REACH_SLOW_MS_BY_CAPABILITY`)
 * read from the map's own keys only: a capability may be named `constructor`, `valueOf` or
 * `__proto__`, which a plain lookup answers with Object.prototype's members (a function, and so
 * NaN in lease arithmetic and a 500 at registration).
 */
export function ownValue<T>(map: Record<string, T>, capability: string): T | undefined {
  return Object.hasOwn(map, capability) ? map[capability] : undefined;
}
