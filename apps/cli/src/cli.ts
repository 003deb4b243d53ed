/**
 * `reach` — Agent-Reach from a terminal: agents, submit, task timelines, dead letters, the four
 * figures. {@link runCli} is the whole program; main.ts only wires it to the process.
 * @packageDocumentation
 */
import { ApiClient } from './api.ts';
import {
  DEFAULT_REGISTRY_URL,
  DEFAULT_ROUTER_URL,
  parseCommandLine,
  serviceUrl,
  USAGE,
} from './args.ts';
import { agentsCommand } from './commands/agents.ts';
import { dlqCommand } from './commands/dlq.ts';
import { statsCommand } from './commands/stats.ts';
import { submitCommand } from './commands/submit.ts';
import { taskCommand } from './commands/task.ts';
import type { Context, Io } from './context.ts';
import { EXIT, isApiError, isNetworkError, isUsageError } from './errors.ts';

export { EXIT } from './errors.ts';
export type { Io } from './context.ts';

const COMMANDS: Record<string, (ctx: Context) => Promise<number>> = {
  agents: agentsCommand,
  submit: submitCommand,
  task: taskCommand,
  dlq: dlqCommand,
  stats: statsCommand,
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
    return await run({
      io,
      router: new ApiClient(
        serviceUrl('router', o.router, io.env.REACH_ROUTER_URL, DEFAULT_ROUTER_URL),
      ),
      registry: new ApiClient(
        serviceUrl('registry', o.registry, io.env.REACH_REGISTRY_URL, DEFAULT_REGISTRY_URL),
      ),
      args: parsed.args,
      options: o,
      json: o.json === true,
    });
  } catch (err: unknown) {
    if (isUsageError(err)) {
      io.err(`reach: ${err.message}\nRun reach --help for usage.\n`);
      return EXIT.usage;
    }
    if (isApiError(err)) {
      io.err(`reach: ${err.code}: ${err.message}\n`);
      return EXIT.server;
    }
    if (isNetworkError(err)) {
      io.err(`reach: NETWORK: ${err.message}\n`);
      return EXIT.server;
    }
    io.err(
      `reach: unexpected error (a bug, please report it): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return EXIT.internal;
  }
}
