/**
 * What the deployment files are checked against: the three services' own settings (their env
 * schemas, through the functions that read them) and their package exports.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { eventSinkOptionsFromEnv } from '@agent-reach/events';
import { DIST_CONDITION } from '@agent-reach/process-kit';
import {
  compileRegistryOptions,
  optionsFromEnv as registryOptionsFromEnv,
} from '@agent-reach/registry-sync';
import {
  compileRelayOptions,
  optionsFromEnv as relayOptionsFromEnv,
  type RelayOptions,
} from '@agent-reach/relay';
import { compileRouterOptions, optionsFromEnv as routerOptionsFromEnv } from '@agent-reach/router';
import { decideAuth, type AuthDecision } from '@agent-reach/service-kit';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The services the image runs. */
export type Role = 'router' | 'registry-sync' | 'relay';
export const ROLES: readonly Role[] = ['router', 'registry-sync', 'relay'];

/**
 * The services that callers and agents call over HTTP: behind nginx, checking API keys. The
 * relay has no callers: it calls registry-sync and the endpoint agents, and serves only its own
 * `/livez`, `/healthz` and `/metrics`.
 */
export type ApiRole = Exclude<Role, 'relay'>;
export const API_ROLES: readonly ApiRole[] = ['router', 'registry-sync'];

/** Whether `role` is one that callers and agents call. */
export const isApiRole = (role: Role): role is ApiRole =>
  (API_ROLES as readonly Role[]).includes(role);

/** The export condition under which the packages resolve to their built JavaScript. */
export { DIST_CONDITION };

/**
 * How each service reads its settings: its own variables, and whether it writes events (and
 * so reads the event sink's INFLUX_* variables too).
 */
const SETTINGS: Record<
  Role,
  {
    read: (env: Record<string, string>) => object;
    events: boolean;
    port: (env: Record<string, string>) => number;
  }
> = {
  router: {
    read: routerOptionsFromEnv,
    events: true,
    port: (env) => compileRouterOptions(routerOptionsFromEnv(env)).port,
  },
  'registry-sync': {
    read: registryOptionsFromEnv,
    events: true,
    port: (env) => compileRegistryOptions(registryOptionsFromEnv(env)).port,
  },
  relay: {
    read: relayOptionsFromEnv,
    events: false,
    port: (env) => relayOptionsOf(env).port,
  },
};

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
  const { read: own, events } = SETTINGS[role];
  const bad: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    const one = { [name]: value };
    try {
      const read =
        Object.keys(own(one)).length > 0 ||
        (events && Object.keys(eventSinkOptionsFromEnv(one)).length > 0);
      if (!read) bad.push(`${name}: not a setting of ${role}`);
    } catch (err: unknown) {
      bad.push(`${name}=${value}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return bad;
}

/** The port `role` listens on with `env` (its default when env sets none). */
export function portOf(role: Role, env: Record<string, string> = {}): number {
  return SETTINGS[role].port(env);
}

/** A relay's settings with `env`, defaults filled; throws the message it would refuse to start with. */
export function relayOptionsOf(env: Record<string, string>): RelayOptions {
  return compileRelayOptions(relayOptionsFromEnv(env));
}

/**
 * What `role` decides about API keys when it starts with `env` (docs/SECURITY.md); throws the
 * message it would refuse to start with (a non-loopback HOST without REACH_ADMIN_KEY, say).
 */
export function authOf(role: ApiRole, env: Record<string, string>): AuthDecision {
  const o =
    role === 'router'
      ? compileRouterOptions(routerOptionsFromEnv(env))
      : compileRegistryOptions(registryOptionsFromEnv(env));
  return decideAuth({ service: role, setting: o.auth, hosts: [o.host], adminKey: o.adminKey });
}
