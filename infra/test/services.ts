/**
 * What the deployment files are checked against: the two services' own settings (their env
 * schemas, through the functions that read them) and their package exports.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { eventSinkOptionsFromEnv } from '@agent-reach/events';
import {
  compileRegistryOptions,
  optionsFromEnv as registryOptionsFromEnv,
} from '@agent-reach/registry-sync';
import { compileRouterOptions, optionsFromEnv as routerOptionsFromEnv } from '@agent-reach/router';
import { decideAuth, type AuthDecision } from '@agent-reach/service-kit';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The two services the image runs. */
export type Role = 'router' | 'registry-sync';
export const ROLES: readonly Role[] = ['router', 'registry-sync'];

/** The export condition under which the packages resolve to their built JavaScript. */
export const DIST_CONDITION = 'agent-reach-dist';

/** A service's built entry, relative to the repository root (and to /app in the image). */
export function builtEntry(role: Role): string {
  const manifest = JSON.parse(readFileSync(`${ROOT}apps/${role}/package.json`, 'utf8')) as {
    exports: Record<string, Record<string, string>>;
  };
  const target = manifest.exports['./server']?.[DIST_CONDITION];
  if (!target) throw new Error(`apps/${role} exports no ./server under ${DIST_CONDITION}`);
  return `apps/${role}/${target.replace(/^\.\//, '')}`;
}

/** The service a container runs, from its command (or args): the entry it names. */
export function roleOf(command: readonly string[] | undefined): Role | undefined {
  const entry = command?.at(-1);
  return ROLES.find((role) => builtEntry(role) === entry);
}

/**
 * The variables of `env` that `role` does not read, or whose value it refuses (with why). A
 * variable counts as read when the service's settings, or its event sink's, change with it.
 */
export function unreadVariables(role: Role, env: Record<string, string>): string[] {
  const own = role === 'router' ? routerOptionsFromEnv : registryOptionsFromEnv;
  const bad: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    const one = { [name]: value };
    try {
      const read =
        Object.keys(own(one)).length > 0 || Object.keys(eventSinkOptionsFromEnv(one)).length > 0;
      if (!read) bad.push(`${name}: not a setting of ${role}`);
    } catch (err: unknown) {
      bad.push(`${name}=${value}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return bad;
}

/** The port `role` listens on with `env` (its default when env sets none). */
export function portOf(role: Role, env: Record<string, string> = {}): number {
  return role === 'router'
    ? compileRouterOptions(routerOptionsFromEnv(env)).port
    : compileRegistryOptions(registryOptionsFromEnv(env)).port;
}

/**
 * What `role` decides about API keys when it starts with `env` (docs/SECURITY.md); throws the
 * message it would refuse to start with (a non-loopback HOST without REACH_ADMIN_KEY, say).
 */
export function authOf(role: Role, env: Record<string, string>): AuthDecision {
  const o =
    role === 'router'
      ? compileRouterOptions(routerOptionsFromEnv(env))
      : compileRegistryOptions(registryOptionsFromEnv(env));
  return decideAuth({ service: role, setting: o.auth, hosts: [o.host], adminKey: o.adminKey });
}
