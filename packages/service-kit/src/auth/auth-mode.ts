import { isIP } from 'node:net';

/** `REACH_AUTH`: `auto` is open only while every listener is on loopback. */
export type AuthSetting = 'auto' | 'off' | 'required';

/** Every value `REACH_AUTH` takes. */
export const AUTH_SETTINGS: readonly AuthSetting[] = ['auto', 'off', 'required'];

/** The shortest `REACH_ADMIN_KEY` accepted: 32 characters (e.g. `openssl rand -hex 32` gives 64). */
export const MIN_ADMIN_KEY_LENGTH = 32;

/** What a service decided at start-up. */
export interface AuthDecision {
  /** True: every request but public and agent-token routes needs a key. */
  required: boolean;
  /** Said loudly at start-up (a warn line) when set. */
  warning?: string;
}

/** True when `host` is a loopback address or `localhost` (an empty host means every address). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || h.startsWith('::ffff:127.');
  return false;
}

/**
 * Decides whether requests need a key (docs/SECURITY.md), or throws a message that says what to
 * set: a listener off loopback needs `REACH_ADMIN_KEY`, and `REACH_AUTH=off` is for loopback
 * only.
 */
export function decideAuth(opts: {
  service: string;
  setting: AuthSetting;
  /** Every address the service listens on. */
  hosts: readonly string[];
  adminKey?: string | undefined;
}): AuthDecision {
  const { service, setting, adminKey } = opts;
  const exposed = opts.hosts.filter((h) => !isLoopbackHost(h));
  if (adminKey !== undefined && adminKey.length < MIN_ADMIN_KEY_LENGTH) {
    throw new Error(
      `${service}: REACH_ADMIN_KEY is too short (${adminKey.length} characters); use at least ${MIN_ADMIN_KEY_LENGTH}, e.g. the output of \`openssl rand -hex 32\``,
    );
  }
  if (exposed.length > 0) {
    if (setting === 'off') {
      throw new Error(
        `${service}: REACH_AUTH=off is allowed only on a loopback HOST (127.0.0.1 or ::1), not ${exposed.join(', ')}; set REACH_AUTH=required and REACH_ADMIN_KEY, or HOST=127.0.0.1`,
      );
    }
    if (!adminKey) {
      throw new Error(
        `${service}: HOST=${exposed.join(', ')} is not a loopback address, so API keys are required and REACH_ADMIN_KEY must be set (the bootstrap operator key, e.g. REACH_ADMIN_KEY=$(openssl rand -hex 32)); or listen on HOST=127.0.0.1`,
      );
    }
    return { required: true };
  }
  if (setting === 'required') {
    return adminKey
      ? { required: true }
      : {
          required: true,
          warning:
            'REACH_AUTH=required without REACH_ADMIN_KEY: only keys already in Redis are accepted',
        };
  }
  return {
    required: false,
    warning: `AUTH IS OFF: every request is served as the operator of the default tenant, without a key (REACH_AUTH=${setting}, loopback only). Set REACH_AUTH=required to require API keys`,
  };
}
