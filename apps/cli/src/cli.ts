/**
 * `reach` — Agent-Reach from a terminal: agents, submit, task timelines, dead letters, the four
 * figures. {@link runCli} is the whole program; main.ts only wires it to the process.
 * @packageDocumentation
 */
import {
  isReachConnectionError,
  isReachHttpError,
  ReachHttpClient,
  type ReachConnectionError,
  type ReachHttpError,
} from '@agent-reach/worker-sdk/http';
import {
  clientSetting,
  deprecatedSettingMessage,
  type ClientSettingName,
} from '@agent-reach/protocol';
import {
  DEFAULT_REGISTRY_URL,
  DEFAULT_ROUTER_URL,
  parseCommandLine,
  serviceUrl,
  USAGE,
} from './args.ts';
import { agentsCommand } from './commands/agents.ts';
import { cancelCommand } from './commands/cancel.ts';
import { dlqCommand } from './commands/dlq.ts';
import { endpointsCommand } from './commands/endpoints.ts';
import { followCommand } from './commands/follow.ts';
import { keysCommand } from './commands/keys.ts';
import { schedulesCommand } from './commands/schedules.ts';
import { statsCommand } from './commands/stats.ts';
import { submitCommand } from './commands/submit.ts';
import { taskCommand } from './commands/task.ts';
import { tasksCommand } from './commands/tasks.ts';
import { tenantsCommand } from './commands/tenants.ts';
import type { Context, Io } from './context.ts';
import { EXIT, isUsageError } from './errors.ts';

export { EXIT } from './errors.ts';
export type { Io } from './context.ts';

const COMMANDS: Record<string, (ctx: Context) => Promise<number>> = {
  agents: agentsCommand,
  submit: submitCommand,
  task: taskCommand,
  tasks: tasksCommand,
  follow: followCommand,
  cancel: cancelCommand,
  dlq: dlqCommand,
  stats: statsCommand,
  keys: keysCommand,
  tenants: tenantsCommand,
  endpoints: endpointsCommand,
  schedules: schedulesCommand,
  // Loaded when used: the MCP SDK costs the other commands' start-up nothing.
  mcp: async (ctx) => (await import('./commands/mcp.ts')).mcpCommand(ctx),
};

/** The {@link Io} of this process: stdout, stderr, its environment and terminal. */
export function processIo(): Io {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    env: process.env,
    stderrIsTTY: process.stderr.isTTY === true,
  };
}

/**
 * Runs one `reach` command line and resolves with its exit code ({@link EXIT}); never rejects.
 * Errors are printed to stderr: usage errors with a pointer to `--help` (2), server errors with
 * the server's code (3).
 */
export async function runCli(argv: readonly string[], io: Io): Promise<number> {
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.options.help || parsed.command === 'help') {
      io.out(USAGE);
      return EXIT.ok;
    }
    const run = parsed.command === undefined ? undefined : COMMANDS[parsed.command];
    if (!run) {
      io.err(USAGE);
      return EXIT.usage;
    }
    const o = parsed.options;
    // REACH_KEY, REACH_ROUTER_URL, REACH_REGISTRY_URL; an earlier spelling with a warning.
    const fromEnv = (name: ClientSettingName) =>
      clientSetting(name, io.env, (old, current) =>
        io.err(`reach: ${deprecatedSettingMessage(old, current)}\n`),
      );
    // The API key: --key, else REACH_KEY; sent as a bearer header to both services.
    const apiKey = o.key ?? fromEnv('apiKey');
    const client = (baseUrl: string) =>
      new ReachHttpClient({ baseUrl, ...(apiKey === undefined ? {} : { apiKey }) });
    return await run({
      io,
      apiKey,
      router: client(serviceUrl('router', o.router, fromEnv('routerUrl'), DEFAULT_ROUTER_URL)),
      registry: client(
        serviceUrl('registry', o.registry, fromEnv('registryUrl'), DEFAULT_REGISTRY_URL),
      ),
      args: parsed.args,
      options: o,
      repeated: parsed.repeated,
      json: o.json === true,
    });
  } catch (err: unknown) {
    if (isUsageError(err)) {
      io.err(`reach: ${err.message}\nRun reach --help for usage.\n`);
      return EXIT.usage;
    }
    if (isReachHttpError(err)) {
      io.err(`reach: ${err.code}: ${serverMessage(err)}\n`);
      return EXIT.server;
    }
    if (isReachConnectionError(err)) {
      io.err(`reach: NETWORK: ${unreachable(err)}\n`);
      return EXIT.server;
    }
    io.err(
      `reach: unexpected error (a bug, please report it): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return EXIT.internal;
  }
}

/** The message of a server's error reply, or the start of a non-JSON one. */
function serverMessage(err: ReachHttpError): string {
  const body = err.body;
  if (typeof body === 'object' && body !== null) {
    const message = (body as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  return typeof body === 'string' && body !== '' ? body.slice(0, 200) : `HTTP ${err.status}`;
}

/** `cannot reach <origin>: <why>` of a request that got no answer. */
function unreachable(err: ReachConnectionError): string {
  const url = err.request.split(' ')[1] ?? '';
  let origin = url;
  try {
    origin = new URL(url).origin;
  } catch {
    // Keep the request as it was written.
  }
  if (err.timedOut) return `cannot reach ${origin}: timed out`;
  const cause =
    err.cause instanceof Error && err.cause.cause instanceof Error ? err.cause.cause : err.cause;
  const why =
    cause instanceof Error
      ? ((cause as NodeJS.ErrnoException).code ?? cause.message)
      : String(cause);
  return `cannot reach ${origin}: ${why}`;
}
