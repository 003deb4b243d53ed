import { createRequire } from 'node:module';

/**
 * What the launcher starts, by the package export that is each one's entry. They resolve the
 * way this process was started: under `--conditions=agent-reach-dist` to the built JavaScript
 * (`apps/router/dist/server.js`), otherwise to the TypeScript sources, which run through tsx.
 */
export const ENTRIES = {
  'registry-sync': '@agent-reach/registry-sync/server',
  router: '@agent-reach/router/server',
  'echo-agent': '@agent-reach/worker-sdk/examples/echo-agent',
  relay: '@agent-reach/relay/server',
  /** The demo endpoint agents (`--kind a2a|http|mcp --port <n>`): servers that know nothing of Agent-Reach. */
  'endpoint-demo': '@agent-reach/relay/demo-main',
} as const;

/** Something the launcher starts. */
export type EntryName = keyof typeof ENTRIES;

const require = createRequire(import.meta.url);

/** The absolute path of a service's (or the echo agent's) entry file. */
export function entryOf(name: EntryName): string {
  return require.resolve(ENTRIES[name]);
}
