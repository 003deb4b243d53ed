import pinoPretty from 'pino-pretty';

/**
 * How `npm start` prints (env LOG_FORMAT): `pretty`, for a person at a terminal, turns each pino
 * line of a process into one readable line (`[router]  [10:42:07] WARN: auth: …`); `json`, for a
 * machine reading the output, prints one JSON object a line. The services themselves always log
 * JSON (their Dockerfiles and manifests run them directly): formatting is the launcher's job.
 */
export type LogFormat = 'pretty' | 'json';

/** The {@link LogFormat} a LOG_FORMAT value names; unset or empty is `pretty`. */
export function logFormatOf(value: string | undefined): LogFormat {
  if (value === undefined || value === '' || value === 'pretty') return 'pretty';
  if (value === 'json') return 'json';
  throw new Error(`LOG_FORMAT=${value}: expected pretty (the default) or json`);
}

/** Options for {@link StackOutput}. */
export interface StackOutputOptions {
  format: LogFormat;
  /** ANSI colours (a terminal): labels and, in `pretty`, log levels. @default false */
  colors?: boolean;
  /** Where the text goes. @default process.stdout */
  write?: (text: string) => void;
}

/** What {@link StackOutput.banner} prints: the text for a person, the fields for a machine. */
export interface Banner {
  /** One line for `json`: the banner's headline. */
  headline: string;
  /** Several lines for `pretty`. */
  text: string;
  /** Fields of the `json` line (URLs, agents). */
  fields: Record<string, unknown>;
}

const COLORS = [36, 33, 35, 32, 34, 31, 96, 93];
const LABEL_WIDTH = 16;

/** A pino line: a JSON object with a numeric `level` (and so a `time` and a `msg`). */
function pinoRecord(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as { level?: unknown }).level === 'number'
    )
      return value as Record<string, unknown>;
  } catch {
    // Not JSON after all: printed as it came.
  }
  return undefined;
}

/**
 * Everything `npm start` prints goes through here: its own status lines, each line its processes
 * write (pino lines from the Node services and agents, plain text from redis-server, influxd and
 * nginx), and the banner. It also knows when a process last printed, so that the banner can wait
 * for start-up's last lines and stay at the bottom of the terminal.
 */
export class StackOutput {
  private readonly write: (text: string) => void;
  private readonly colors: boolean;
  private readonly labels = new Map<string, string>();
  private readonly pretty: ((record: Record<string, unknown>) => string) | undefined;
  private lastChildLineAt = 0;

  constructor(private readonly opts: StackOutputOptions) {
    this.write = opts.write ?? ((text) => void process.stdout.write(text));
    this.colors = opts.colors ?? false;
    if (opts.format === 'pretty') {
      this.pretty = pinoPretty.prettyFactory({
        colorize: this.colors,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss',
        // The label says which process; `module` leads the message.
        ignore: 'pid,hostname,service,name,module',
        messageFormat: '{if module}{module}: {end}{msg}',
      });
    }
  }

  /** A status line of the launcher's own. */
  say(line: string): void {
    if (this.opts.format === 'json') this.write(`${this.json('launcher', line)}\n`);
    else this.write(`${this.paint(1, '[start]')} ${line}\n`);
  }

  /** Prints the lines of the process `name` from now on: pass each line to the function returned. */
  lineOf(name: string): (line: string) => void {
    return (line) => {
      this.lastChildLineAt = performance.now();
      const record = pinoRecord(line);
      if (this.opts.format === 'json') {
        // A pino line as the process wrote it; plain text in a line of the same shape.
        this.write(`${record ? line : this.json(name, line)}\n`);
        return;
      }
      const label = this.label(name);
      const text = record && this.pretty ? this.pretty(record).trimEnd() : line;
      // An error's stack spans lines: each keeps the label, so `grep '\[router\]'` finds them.
      const lines = text.split('\n').map((l) => `${label} ${l.trimEnd()}`);
      this.write(`${lines.join('\n')}\n`);
    };
  }

  /** Prints the banner: several lines in `pretty`, one JSON line in `json`. */
  banner(b: Banner): void {
    if (this.opts.format === 'json')
      this.write(
        `${JSON.stringify({ level: 30, time: Date.now(), service: 'launcher', ...b.fields, msg: b.headline })}\n`,
      );
    else this.write(b.text);
  }

  /**
   * Resolves once no process has printed for `quietMs`, or after `maxMs` at most: the stack is
   * up, and the lines its processes print as they settle (an InfluxDB API detected, an agent
   * ready) come before the banner rather than push it up.
   */
  async settled(quietMs: number, maxMs: number): Promise<void> {
    const deadline = performance.now() + maxMs;
    for (;;) {
      const now = performance.now();
      const quietFor = now - this.lastChildLineAt;
      if (quietFor >= quietMs || now >= deadline) return;
      await new Promise((r) => setTimeout(r, Math.min(quietMs - quietFor, deadline - now)));
    }
  }

  private json(service: string, msg: string): string {
    return JSON.stringify({ level: 30, time: Date.now(), service, msg });
  }

  private label(name: string): string {
    let label = this.labels.get(name);
    if (label === undefined) {
      label = this.paint(
        COLORS[this.labels.size % COLORS.length]!,
        `[${name}]`.padEnd(LABEL_WIDTH),
      );
      this.labels.set(name, label);
    }
    return label;
  }

  private paint(code: number, s: string): string {
    return this.colors ? `\x1b[${code}m${s}\x1b[0m` : s;
  }
}
