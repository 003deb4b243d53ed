import type { ReachHttpClient } from '@agent-reach/worker-sdk/http';
import type { OptionValues } from './args.ts';

/** Where `reach` writes, and what it knows of its terminal. Tests pass their own. */
export interface Io {
  /** Writes to stdout (tables, results, JSON). */
  out(text: string): void;
  /** Writes to stderr (errors, the progress line). */
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** True when stderr is a terminal: the progress line shows by default and redraws in place. */
  stderrIsTTY: boolean;
}

/** Everything a command needs. */
export interface Context {
  io: Io;
  router: ReachHttpClient;
  /** The API key (`--key`, else REACH_KEY) the clients send; `reach mcp` forwards it. */
  apiKey: string | undefined;
  registry: ReachHttpClient;
  /** Positional arguments after the command. */
  args: string[];
  options: OptionValues;
  /** Every value of each repeatable option (`--capability`, `--tag`, `--header`), in order. */
  repeated: Record<string, string[]>;
  /** `--json`: machine-readable output only. */
  json: boolean;
}

/** Writes `value` as indented JSON and a newline to stdout. */
export function printJson(ctx: Context, value: unknown): void {
  ctx.io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes lines to stdout. */
export function printLines(ctx: Context, ...lines: string[]): void {
  ctx.io.out(`${lines.join('\n')}\n`);
}
