import { parseArgs } from 'node:util';
import { CLIENT_DEFAULTS } from '@agent-reach/protocol';
import { UsageError } from './errors.ts';

/** Default service URLs, the ports `npm start` listens on (the clients' settings table). */
export const DEFAULT_ROUTER_URL = CLIENT_DEFAULTS.routerUrl;
/** See {@link DEFAULT_ROUTER_URL}. */
export const DEFAULT_REGISTRY_URL = CLIENT_DEFAULTS.registryUrl;

/** Every option any command takes; each command accepts the global ones and its own. */
const OPTIONS = {
  router: { type: 'string' },
  registry: { type: 'string' },
  key: { type: 'string' },
  json: { type: 'boolean' },
  progress: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  capability: { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  'task-id': { type: 'string' },
  'trace-id': { type: 'string' },
  'task-timeout': { type: 'string' },
  'callback-topic': { type: 'string' },
  priority: { type: 'string' },
  fallback: { type: 'string' },
  'delay-ms': { type: 'string' },
  'run-at': { type: 'string' },
  'every-ms': { type: 'string' },
  cron: { type: 'string' },
  timezone: { type: 'string' },
  limit: { type: 'string' },
  window: { type: 'string' },
  by: { type: 'string' },
  tenant: { type: 'string' },
  role: { type: 'string' },
  capabilities: { type: 'string' },
  label: { type: 'string' },
  'expires-at': { type: 'string' },
  'rate-per-s': { type: 'string' },
  'max-inflight': { type: 'string' },
  protocol: { type: 'string' },
  url: { type: 'string' },
  'capability-prefix': { type: 'string' },
  'max-concurrency': { type: 'string' },
  region: { type: 'string' },
  tag: { type: 'string' },
  shared: { type: 'boolean' },
  'health-url': { type: 'string' },
  'timeout-ms': { type: 'string' },
  header: { type: 'string' },
  'bearer-secret': { type: 'string' },
  weight: { type: 'string' },
  'max-queued': { type: 'string' },
  'max-fairness-weight': { type: 'string' },
  status: { type: 'string' },
  agent: { type: 'string' },
  'error-code': { type: 'string' },
  parent: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  'min-duration-ms': { type: 'string' },
  cursor: { type: 'string' },
} as const;

/** Options a command may give more than once (`--capability a --capability b`). */
const REPEATABLE = new Set(['capability', 'tag', 'header']);

const GLOBAL = ['router', 'registry', 'key', 'json', 'progress', 'help'];

/** The options of `reach endpoints add` (the declaration's fields); `list` and `remove` take none. */
export const ENDPOINT_ADD_OPTIONS = [
  'protocol',
  'url',
  'capability',
  'capabilities',
  'capability-prefix',
  'max-concurrency',
  'region',
  'tag',
  'shared',
  'health-url',
  'timeout-ms',
  'header',
  'bearer-secret',
] as const;

/** The options of `reach tenants set` (the record's fields); `list` and `get` take none. */
export const TENANT_SET_OPTIONS = [
  'weight',
  'max-queued',
  'max-inflight',
  'max-fairness-weight',
] as const;

/** The commands and the options of each. */
export const COMMANDS: Record<string, readonly string[]> = {
  agents: ['capability', 'weight'],
  submit: [
    'wait',
    'timeout',
    'task-id',
    'trace-id',
    'task-timeout',
    'callback-topic',
    'priority',
    'fallback',
    'delay-ms',
    'run-at',
  ],
  task: [],
  tasks: [
    'status',
    'capability',
    'agent',
    'error-code',
    'parent',
    'tenant',
    'since',
    'until',
    'min-duration-ms',
    'limit',
    'cursor',
  ],
  follow: [],
  cancel: [],
  dlq: ['capability', 'limit'],
  stats: ['window', 'by', 'capability'],
  keys: ['tenant', 'role', 'capabilities', 'label', 'expires-at', 'rate-per-s', 'max-inflight'],
  endpoints: ENDPOINT_ADD_OPTIONS,
  tenants: TENANT_SET_OPTIONS,
  schedules: ['every-ms', 'cron', 'timezone', 'task-timeout', 'callback-topic'],
  mcp: [],
  help: [],
};

/** Option values as parsed (strings and booleans; checked by each command). */
export type OptionValues = {
  [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string;
};

/** A parsed command line. */
export interface ParsedArgs {
  /** `undefined` when none was given. */
  command: string | undefined;
  /** Positional arguments after the command. */
  args: string[];
  options: OptionValues;
  /**
   * Every value of each option that may be repeated (`--capability`, `--tag`, `--header`), in
   * order; `options` holds the last one.
   */
  repeated: Record<string, string[]>;
}

/** `reach --help`. */
export const USAGE = `reach — Agent-Reach from a terminal

Usage:
  reach agents [--capability <name>]                 live agents: status (DEGRADED: failing too often),
                                                     health score 0-100, inflight/max, heartbeat age,
                                                     the dependencies their last probe reported
  reach agents promote <agent_id> [--weight <0.1-10>]
                                                     end an observing agent's observation (operator key):
                                                     it gets caller traffic, at the weight given
  reach agents observation <agent_id>                an observing agent's shadow results against the
                                                     serving agents' (operator key)
  reach submit <capability> <json> [--wait] [--timeout 30]
               [--task-id <id>] [--trace-id <id>] [--task-timeout <s>] [--callback-topic <topic>]
               [--priority 0-9] [--fallback <capability,...>] [--delay-ms <ms> | --run-at <time>]
                                                     submit a task; --wait polls until it ends and prints the result;
                                                     --priority: 9 most urgent (held and pooled tasks go highest first);
                                                     --fallback: capabilities used, in order, when none of <capability> is live;
                                                     --delay-ms / --run-at (ISO time or epoch ms): held until then (delayed)
  reach task <task_id>                               the task's timeline with the gap between stages
  reach tasks list [--status dead,cancelled] [--capability <name>] [--agent <id>]
               [--error-code <CODE>] [--parent <task_id>] [--tenant <t>] [--since 1h]
               [--until <time>] [--min-duration-ms <ms>] [--limit 100] [--cursor <c>]
                                                     search tasks, newest first: recent ones from Redis, older
                                                     ones from the InfluxDB archive (times: 90s, 15m, 1h, 7d ago,
                                                     ISO or epoch ms; --tenant: operators)
  reach follow <task_id>                             follow the task's events until it ends: its output chunks
                                                     on stdout as they come, stages and progress on stderr
                                                     (--json: one event per line); exit 1 if it ended dead
  reach cancel <task_id>                             cancel a task (and its children): final at once,
                                                     its agent's handler aborted; a finished one: ALREADY_FINAL
  reach dlq list [--capability <name>] [--limit 100] dead letters, newest first
  reach dlq replay <task_id>                         send a dead letter again as a fresh attempt
  reach stats [--window 15m] [--by capability|agent] [--capability <name>]
                                                     success rate, receipt latency, execution time, completion rate,
                                                     failures by error_code
  reach schedules create <capability> <json> (--every-ms <ms> | --cron '<expr>' [--timezone <IANA>])
               [--task-timeout <s>] [--callback-topic <topic>]
                                                     fire the task on a cadence (every_ms ≥ 1000); each tick is the
                                                     task <schedule_id>:<tick ms>, once per tick
  reach schedules list                               your schedules: cadence, next tick, last task
  reach schedules pause|resume|delete <schedule_id>  stop firing, fire again from the next tick, delete
  reach endpoints add <agent_id> --protocol a2a|http|mcp --url <url>
               [--capability <name> ...] [--capabilities a,b] [--capability-prefix <p>]
               [--max-concurrency <n>] [--region <r>] [--tag <t> ...] [--shared]
               [--health-url <url>] [--timeout-ms <ms>] [--header Name=Value ...]
               [--bearer-secret <secret>]
                                                     declare (or replace) an endpoint agent a relay serves;
                                                     http needs its capabilities, a2a and mcp discover theirs;
                                                     headers and the bearer secret are stored, never shown
  reach endpoints list                               declared endpoint agents: protocol, URL, capabilities, source
  reach endpoints remove <agent_id>                  remove a declaration (its relay stops serving it)
  reach keys create --tenant <t> --role caller|operator|agent|relay
               [--capabilities a,b] [--label <text>] [--expires-at <ISO time or epoch ms>]
               [--rate-per-s <n>] [--max-inflight <n>]
                                                     make an API key (operator key); prints it once
  reach keys list                                    API keys, without secrets
  reach keys revoke <key_id>                         revoke a key: refused everywhere within a second
  reach tenants list                                 tenant records: weight, max queued, max inflight,
                                                     max fairness weight (operator key)
  reach tenants get <tenant>                         one tenant's record (the defaults when it has none)
  reach tenants set <tenant> [--weight <n>] [--max-queued <n>] [--max-inflight <n>]
               [--max-fairness-weight <n>]
                                                     change the fields given, the others kept: weight (0.01-1000) is
                                                     the tenant's share of a saturated capability; max-queued its
                                                     tasks in one capability's waiting room (0: the router's default);
                                                     max-inflight the slots of one capability it holds (0: no cap)
  reach mcp                                          an MCP server on stdio for LLM clients: the router's /mcp
                                                     tools (submit_task, get_task, cancel_task, list_agents,
                                                     run_<capability>) and task timelines (docs/MCP.md)

Options:
  --router <url>     router URL (env REACH_ROUTER_URL, default ${DEFAULT_ROUTER_URL})
  --registry <url>   registry-sync URL (env REACH_REGISTRY_URL, default ${DEFAULT_REGISTRY_URL})
  --key <key>        API key, sent as Authorization: Bearer (env REACH_KEY; needed when the
                     services require keys, see docs/SECURITY.md)
  --json             machine-readable JSON on stdout instead of tables
  --progress         show the progress line of --wait even when stderr is not a terminal
  -h, --help         this help

Exit codes:
  0 done · 1 the task ended dead or failed · 2 usage error · 3 server or network error
  (the server's error code is printed) · 124 --wait timed out before the task ended
`;

/**
 * Parses argv (node:util parseArgs, strict): the command, its positionals and options.
 * @throws UsageError for an unknown command or option, an option of another command, or a missing value.
 */
export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
      tokens: true,
    });
  } catch (err: unknown) {
    throw new UsageError(
      err instanceof Error ? (err.message.split('\n')[0] ?? err.message) : String(err),
    );
  }
  const [command, ...args] = parsed.positionals;
  if (command !== undefined && !Object.hasOwn(COMMANDS, command)) {
    throw new UsageError(
      `unknown command ${JSON.stringify(command)}; commands: ${Object.keys(COMMANDS).join(', ')}`,
    );
  }
  const allowed = new Set([...GLOBAL, ...(command ? (COMMANDS[command] ?? []) : [])]);
  const repeated: Record<string, string[]> = {};
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    if (!allowed.has(token.name)) {
      throw new UsageError(`${token.rawName} is not an option of reach ${command ?? ''}`.trimEnd());
    }
    if (REPEATABLE.has(token.name) && token.value !== undefined)
      (repeated[token.name] ??= []).push(token.value);
  }
  return { command, args, options: parsed.values, repeated };
}

/**
 * A positive number of seconds from an option (`--timeout 30`, `--task-timeout 2.5`).
 * @throws UsageError when it is not a positive number.
 */
export function seconds(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(
      `--${name} must be a positive number of seconds, got ${JSON.stringify(value)}`,
    );
  return n;
}

/**
 * A service URL from an option, the environment or the default.
 * @throws UsageError when it is not an http(s) URL.
 */
export function serviceUrl(
  option: string,
  fromOption: string | undefined,
  fromEnv: string | undefined,
  fallback: string,
): string {
  const value = fromOption ?? (fromEnv?.trim() ? fromEnv.trim() : fallback);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--${option} must be a URL like ${fallback}, got ${JSON.stringify(value)}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--${option} must be http(s), got ${value}`);
  return value.replace(/\/+$/, '');
}
