/**
 * `reach mcp` (apps/cli, a stdio relay to the router's `/mcp`) as a fuzz target: one spawned
 * process, sent the MCP calls of mcp.ts and lines that are no JSON-RPC message at all, one line
 * at a time. A request is owed its answer; after each line a `ping` of the fuzz's own tells when
 * the relay has taken it, so a line that gets no answer (a notification, a malformed line) is
 * seen through too. The process must stay up, and end with code 0 when its stdin ends.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import type { FuzzTarget } from './campaign.ts';
import { rpcArb } from './jsonrpc.ts';
import { mcpCalls, type McpContext } from './mcp.ts';
import type { FuzzRequest } from './requests.ts';
import { readReply } from './replies.ts';
import { REQUEST_TIMEOUT_MS, type Outcome, type RequestSender } from './send.ts';

/** Where `npx reach` resolves the CLI (the workspace's bin), as test/e2e/mcp.test.ts runs it. */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** How much of the relay's stderr is kept, for the report. */
const KEEP_STDERR = 8 * 1024;

/** Lines that are no JSON-RPC message. */
const RAW_LINES: readonly string[] = [
  '',
  '   ',
  'not json',
  '{',
  '}',
  '[]',
  '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
  'null',
  '0',
  '"x"',
  '{"jsonrpc":"2.0"}',
  '{"jsonrpc":"2.0","id":{},"method":"ping"}',
  '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}',
  '\uFEFF{"jsonrpc":"2.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1,"method":"ping"}\r',
  'x'.repeat(1024 * 1024),
  `{"jsonrpc":"2.0","id":1,"method":"ping","params":${'['.repeat(5000)}${']'.repeat(5000)}}`,
];

/** A JSON-RPC request id, if the line is a request the relay must answer (as its schema reads one). */
function requestIdOf(line: string): string | number | undefined {
  let m: unknown;
  try {
    m = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return undefined;
  const r = m as Record<string, unknown>;
  const params = r.params;
  const paramsOk =
    params === undefined ||
    (typeof params === 'object' && params !== null && !Array.isArray(params));
  const id = r.id;
  const idOk = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
  if (r.jsonrpc !== '2.0' || typeof r.method !== 'string' || !paramsOk || !idOk) return undefined;
  if ('result' in r || 'error' in r) return undefined;
  return id;
}

/** One `reach mcp` process, fed one line at a time. */
export class ReachMcpProcess implements RequestSender {
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcessWithoutNullStreams;
  private code: number | null | undefined;
  private stderrText = '';
  private buffer = '';
  private readonly waiting = new Map<string, (reply: string) => void>();
  private queue: Promise<unknown> = Promise.resolve();
  private barriers = 0;

  constructor(env: { routerUrl: string; key?: string }) {
    this.child = spawn('npx', ['--no-install', 'reach', 'mcp'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        REACH_ROUTER_URL: env.routerUrl,
        ...(env.key ? { REACH_KEY: env.key } : {}),
      },
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code) => {
        this.code = code;
        resolve(code);
      }),
    );
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderrText = (this.stderrText + chunk).slice(-KEEP_STDERR);
    });
    // A relay gone while a line is written: its exit is the finding, not an EPIPE here.
    this.child.stdin.on('error', () => undefined);
  }

  /** What the relay wrote to stderr (the last 8 KiB). */
  stderr(): string {
    return this.stderrText;
  }

  /** Still running. */
  get alive(): boolean {
    return this.code === undefined;
  }

  /** Sends one line and waits for what it is owed (lines are sent one at a time). */
  send(req: FuzzRequest): Promise<Outcome> {
    const next = this.queue.then(() => this.sendOne(req));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Nothing to release: {@link end} ends the process. */
  close(): void {}

  /** Ends stdin and waits for the process to exit; its code, or `timeout`. */
  async end(timeoutMs = 30_000): Promise<number | null | 'timeout'> {
    await this.queue;
    this.child.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>(
      (r) => (timer = setTimeout(() => r('timeout'), timeoutMs)),
    );
    const code = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (code === 'timeout') this.child.kill('SIGKILL');
    return code;
  }

  private async sendOne(req: FuzzRequest): Promise<Outcome> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    if (!this.alive)
      return { fault: 'closed', detail: `reach mcp exited with ${this.code}`, ms: 0 };
    const line = (req.body ?? Buffer.alloc(0)).toString('utf8').replace(/\r?\n/g, ' ');
    const id = requestIdOf(line);
    const barrier = `fuzz-barrier-${this.barriers++}`;
    const answer = id === undefined ? undefined : this.expect(String(id));
    const taken = this.expect(barrier);
    this.child.stdin.write(`${line}\n`);
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: barrier, method: 'ping' })}\n`);
    const deadline = new Promise<'timeout' | 'exit'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), REQUEST_TIMEOUT_MS);
      void this.exited.then(() => {
        clearTimeout(timer);
        resolve('exit');
      });
      void Promise.all([taken, answer]).then(() => clearTimeout(timer));
    });
    const got = await Promise.race([Promise.all([taken, answer]), deadline]);
    if (got === 'exit')
      return { fault: 'closed', detail: `reach mcp exited with ${this.code}`, ms: elapsed() };
    if (got === 'timeout') {
      this.waiting.clear();
      return { fault: 'timeout', ms: elapsed() };
    }
    const [, reply] = got;
    return {
      ...(reply === undefined ? { rpc: 'none' } : readReply(Buffer.from(reply), true)),
      ms: elapsed(),
    };
  }

  private expect(id: string): Promise<string> {
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  private onStdout(chunk: string): void {
    this.buffer += chunk;
    for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      let id: unknown;
      try {
        id = (JSON.parse(line) as { id?: unknown }).id;
      } catch {
        continue;
      }
      const waiter = this.waiting.get(String(id));
      this.waiting.delete(String(id));
      waiter?.(line);
    }
  }
}

/** The key of the relay's figures (and of `REACH_FUZZ_ONLY`). */
export const RELAY_KEY = 'reach-mcp stdio';

/** The target: the MCP calls over stdio, and lines that are no message. */
export function reachMcpTarget(ctx: McpContext, relay: ReachMcpProcess): FuzzTarget {
  // The relay sends its own key: the calls carry none.
  const calls = rpcArb(mcpCalls(ctx), { path: '/mcp', auth: fc.constant(undefined) }).map(
    (req): FuzzRequest => ({ ...req, method: 'LINE', target: 'stdin', headers: {} }),
  );
  const raw = fc.constantFrom(...RAW_LINES).map((line): FuzzRequest => ({
    category: 'raw-line',
    method: 'LINE',
    target: 'stdin',
    headers: {},
    body: Buffer.from(line),
  }));
  return {
    key: RELAY_KEY,
    baseUrl: ctx.routerUrl,
    count: ctx.count,
    arb: fc.oneof({ weight: 8, arbitrary: calls }, { weight: 2, arbitrary: raw }),
    sender: relay,
  };
}
