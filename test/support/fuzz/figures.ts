/**
 * What a fuzz run counts — requests, statuses and JSON-RPC answers per endpoint and per kind of
 * request, service exits and failed liveness checks, the failures with the request that caused
 * each — and how the figures are printed.
 */
import type { FuzzRequest } from './requests.ts';
import type { Outcome } from './send.ts';

/**
 * 5xx replies that are the API's designed answer to a well-formed request, not a server fault:
 * `503 NO_AGENT` (no live agent serves the capability asked for) and `502 CARD_FETCH_FAILED` (a
 * registration's `card_url` on a loopback host that serves no card).
 */
export const DESIGNED_5XX = new Set(['503 NO_AGENT', '502 CARD_FETCH_FAILED']);

/**
 * MCP tool results marked `isError` whose code is a server fault (the API answered 5xx): any
 * other is the API's answer to the call (`TASK_NOT_FOUND`, `INVALID_PARAMS`, `NO_AGENT`, …).
 */
const TOOL_FAULTS = new Set(['INTERNAL', 'STORE_UNAVAILABLE', 'uncoded']);

/** Failures kept with their requests: per endpoint, and in all. */
const FAILURES_PER_ENDPOINT = 3;
const MAX_FAILURES = 150;

/** An exit is laid to the endpoints that had a failure this long before it. */
const EXIT_WINDOW_MS = 10_000;

/** Requests slower than this are printed with the figures. */
const SLOW_MS = 5000;

/** A request that got a server error, a hang, or a hang-up it did not ask for. */
export interface Failure {
  endpoint: string;
  category: string;
  why: string;
  request: string;
}

/** Counts of one endpoint. */
export interface EndpointFigures {
  requests: number;
  /** By status (`200`, `404`, …) or fault (`closed`, `timeout`, `client`). */
  statuses: Record<string, number>;
  /**
   * JSON-RPC answers by code (`result`, `-32602`, `tool:TASK_NOT_FOUND`, …; `-32603` with its
   * Agent-Reach code when designed), and first events of event streams (`sse:stage`).
   */
  rpc: Record<string, number>;
  failures: number;
  /** Service exits that followed a failed answer (5xx, -32603, …) of this endpoint within 10 s. */
  exits: number;
  lastFailureAt?: number;
  maxMs: number;
  totalMs: number;
  /** The slowest request, described. */
  slowest?: string;
}

/** Every count of a run. */
export class Figures {
  readonly endpoints = new Map<string, EndpointFigures>();
  /** By kind of request, then by status or fault. */
  readonly categories = new Map<string, Record<string, number>>();
  /** 5xx answers (and JSON-RPC -32603 errors that carry one) counted as designed (see {@link DESIGNED_5XX}). */
  designed5xx = 0;
  /** `router exited with 1 (after failures of: …)`. */
  readonly exits: string[] = [];
  /** Liveness checks made (`GET /livez` of each service), and how many failed. */
  livezChecks = 0;
  /** 4xx replies that carried no `{error: CODE}` body (the HTTP parser's own, e.g. 431). */
  uncoded4xx = 0;
  failureCount = 0;
  /** Failures by endpoint and kind (`router a2a GetTask: JSON-RPC -32603 …`), counted. */
  readonly failureKinds = new Map<string, number>();
  /** The first failures of each endpoint, with their requests. */
  readonly failures: Failure[] = [];
  startedAt = performance.now();
  durationMs = 0;

  /** Counts one outcome; returns the failure, if it is one. */
  record(endpoint: string, req: FuzzRequest, out: Outcome): Failure | undefined {
    const ep = this.endpoint(endpoint);
    const key = statusKey(out);
    ep.requests += 1;
    ep.statuses[key] = (ep.statuses[key] ?? 0) + 1;
    const rpc = rpcKey(out);
    if (rpc !== undefined) ep.rpc[rpc] = (ep.rpc[rpc] ?? 0) + 1;
    if (out.ms > ep.maxMs) {
      ep.maxMs = out.ms;
      ep.slowest = `${describe(req)} → ${key}`;
    }
    ep.totalMs += out.ms;
    const cat = this.categories.get(req.category) ?? {};
    this.categories.set(req.category, cat);
    const catKey = rpc === undefined ? key : `${key}/${rpc}`;
    cat[catKey] = (cat[catKey] ?? 0) + 1;
    const coded = out.code !== undefined || (out.rpc !== undefined && out.rpc !== 'not-jsonrpc');
    if (out.status !== undefined && out.status >= 400 && out.status < 500 && !coded && !req.raw)
      this.uncoded4xx += 1;
    const why = judge(req, out);
    if (why === 'designed') {
      this.designed5xx += 1;
      return undefined;
    }
    if (!why) return undefined;
    ep.failures += 1;
    // A hang-up or refused connection follows an exit; an answer that was a fault may cause one.
    if (out.fault === undefined) ep.lastFailureAt = performance.now();
    return this.fail({ endpoint, category: req.category, why, request: describe(req) });
  }

  /** Counts a service's exit, laid to the endpoints that failed shortly before it. */
  recordExit(service: string, code: number | null): void {
    const since = performance.now() - EXIT_WINDOW_MS;
    const suspects = [...this.endpoints].filter(
      ([, ep]) => (ep.lastFailureAt ?? -Infinity) > since,
    );
    for (const [, ep] of suspects) ep.exits += 1;
    const after =
      suspects.length > 0 ? ` after failures of ${suspects.map(([k]) => k).join(', ')}` : '';
    this.exits.push(`${service} exited with ${code}${after}`);
  }

  /** Counts one liveness check of a service; `why` when it failed. */
  recordLivez(service: string, why?: string): void {
    this.livezChecks += 1;
    if (why)
      this.fail({
        endpoint: `${service} GET /livez`,
        category: 'livez',
        why,
        request: 'GET /livez',
      });
  }

  private endpoint(key: string): EndpointFigures {
    let ep = this.endpoints.get(key);
    if (!ep) {
      ep = { requests: 0, statuses: {}, rpc: {}, failures: 0, exits: 0, maxMs: 0, totalMs: 0 };
      this.endpoints.set(key, ep);
    }
    return ep;
  }

  /** Keeps the first few failures of each endpoint, so that one noisy endpoint hides no other. */
  private fail(failure: Failure): Failure {
    this.failureCount += 1;
    const kind = `${failure.endpoint}: ${kindOf(failure.why)}`;
    this.failureKinds.set(kind, (this.failureKinds.get(kind) ?? 0) + 1);
    const kept = this.failures.filter((f) => f.endpoint === failure.endpoint).length;
    if (kept < FAILURES_PER_ENDPOINT && this.failures.length < MAX_FAILURES)
      this.failures.push(failure);
    return failure;
  }

  get requests(): number {
    let n = 0;
    for (const ep of this.endpoints.values()) n += ep.requests;
    return n;
  }

  /** The status histogram of the whole run. */
  histogram(): Record<string, number> {
    return this.sum('statuses');
  }

  /** The JSON-RPC answers (and first events) of the whole run. */
  rpcHistogram(): Record<string, number> {
    return this.sum('rpc');
  }

  /** The figures as text: one line per endpoint, the histograms, then the failures. */
  format(title: string): string {
    const rpc = this.rpcHistogram();
    const lines = [
      `${title}: ${this.requests} requests in ${(this.durationMs / 1000).toFixed(1)} s ` +
        `(${Math.round(this.requests / (this.durationMs / 1000))}/s), ${this.failureCount} failures, ` +
        `${this.designed5xx} designed 5xx (503 NO_AGENT, 502 CARD_FETCH_FAILED; as -32603 too), ` +
        `${this.uncoded4xx} 4xx without an error code, ${this.exits.length} service exits, ` +
        `${this.livezChecks} /livez checks`,
      `status histogram: ${fmt(this.histogram())}`,
      ...(Object.keys(rpc).length > 0 ? [`JSON-RPC answers and first events: ${fmt(rpc)}`] : []),
      ...this.exits.map((e) => `EXIT: ${e}`),
      '',
      'endpoint'.padEnd(58) + 'requests  fail exit mean ms max ms  statuses | JSON-RPC answers',
    ];
    for (const [key, ep] of [...this.endpoints].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(
        key.padEnd(58) +
          String(ep.requests).padStart(8) +
          String(ep.failures).padStart(6) +
          String(ep.exits).padStart(5) +
          (ep.totalMs / ep.requests).toFixed(1).padStart(8) +
          String(Math.round(ep.maxMs)).padStart(7) +
          '  ' +
          fmt(ep.statuses) +
          (Object.keys(ep.rpc).length > 0 ? ` | ${fmt(ep.rpc)}` : ''),
      );
    const slow = [...this.endpoints].filter(([, ep]) => ep.maxMs > SLOW_MS);
    if (slow.length > 0)
      lines.push('', `slowest requests of the endpoints with one over ${SLOW_MS} ms:`);
    for (const [key, ep] of slow)
      lines.push(`  [${key}] ${Math.round(ep.maxMs)} ms: ${ep.slowest}`);
    lines.push('', 'by kind of request:');
    for (const [cat, h] of [...this.categories].sort(([a], [b]) => a.localeCompare(b)))
      lines.push(`  ${cat.padEnd(30)} ${fmt(h)}`);
    if (this.failureKinds.size > 0) {
      lines.push('', 'failures by endpoint and kind:');
      for (const [kind, n] of [...this.failureKinds].sort(([a], [b]) => a.localeCompare(b)))
        lines.push(`  ${String(n).padStart(6)}  ${kind}`);
    }
    if (this.failures.length > 0) {
      lines.push('', `first ${this.failures.length} failures:`);
      for (const f of this.failures)
        lines.push(`  [${f.endpoint}] ${f.category}: ${f.why}\n    ${f.request}`);
    }
    return lines.join('\n');
  }

  private sum(field: 'statuses' | 'rpc'): Record<string, number> {
    const out: Record<string, number> = {};
    for (const ep of this.endpoints.values())
      for (const [k, v] of Object.entries(ep[field])) out[k] = (out[k] ?? 0) + v;
    return out;
  }
}

/** Why an outcome is a failure, `'designed'` for an allowed 5xx, or undefined when it is fine. */
export function judge(req: FuzzRequest, out: Outcome): string | undefined {
  if (out.status !== undefined) {
    if (out.status >= 500) {
      if (DESIGNED_5XX.has(`${out.status} ${out.code ?? ''}`)) return 'designed';
      return `${out.status} ${out.code ?? '(no error code)'}`;
    }
    return out.rpc === undefined ? undefined : judgeRpc(req, out);
  }
  // A reply that came another way than HTTP (a line of a process's stdout).
  if (out.fault === undefined && out.rpc !== undefined) return judgeRpc(req, out);
  if (out.fault === 'closed' && req.mayClose) return undefined;
  if (out.fault === 'timeout') return `no reply within ${Math.round(out.ms)} ms`;
  return `${out.fault ?? 'client'}${out.detail ? ` (${out.detail})` : ''} without a reply`;
}

/**
 * A JSON-RPC answer: `-32603` (internal error) is a server fault unless it carries a designed
 * 5xx (`503 NO_AGENT`) or a `429` (the API's "retry shortly"), as a tool result coded as a
 * server fault is; an answer the request does not allow (see `FuzzRequest.expectRpc`) is a
 * failure too.
 */
function judgeRpc(req: FuzzRequest, out: Outcome): string | undefined {
  const said = out.message ? `: ${out.message}` : '';
  if (out.rpc === '-32603') {
    const reason = out.reason ?? '';
    if (designedReason(reason)) return 'designed';
    return `JSON-RPC -32603${reason ? ` (${reason})` : ''}${said}`;
  }
  if (out.rpc?.startsWith('tool:') && TOOL_FAULTS.has(out.reason ?? 'uncoded'))
    return `MCP tool result ${out.reason ?? ''}`;
  const owed = (e: string) => (e.endsWith(':') ? out.rpc?.startsWith(e) : e === out.rpc);
  if (req.expectRpc && out.rpc !== undefined && !req.expectRpc.some(owed))
    return `JSON-RPC ${out.rpc}, expected ${req.expectRpc.join(' or ')}${said}`;
  return undefined;
}

/**
 * A designed 5xx carried by a JSON-RPC error (`503 NO_AGENT`, or `NO_AGENT` alone where A2A 0.3
 * says only the code), or a `429` (`AT_CAPACITY`, `RATE_LIMITED`: retry shortly).
 */
function designedReason(reason: string): boolean {
  if (DESIGNED_5XX.has(reason) || reason.startsWith('429 ')) return true;
  return [...DESIGNED_5XX, '429 AT_CAPACITY', '429 RATE_LIMITED'].some((d) =>
    d.endsWith(` ${reason}`),
  );
}

/**
 * A failure's reason in one short line, to count alike ones: a zod validation error (what the MCP
 * SDK throws for params of the wrong shape) by its first issue's path, other reasons with quoted
 * values and long numbers masked.
 */
function kindOf(why: string): string {
  const zod = /^(.*?): \[\s*\{[\s\S]*?"path": \[([^\]]*)\][\s\S]*?"message": "([^"]*)"/.exec(why);
  if (zod) {
    const path = (zod[2] ?? '').replace(/[\s"]/g, '').replace(/,/g, '.');
    return `${zod[1]}: zod: params at ${path} ${(zod[3] ?? '').replace(/received .*$/, 'received …')}`;
  }
  return why
    .replace(/\s+/g, ' ')
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+\.\d+(e[+-]?\d+)?|\d{6,}/g, 'N')
    .slice(0, 120);
}

/** How an outcome is counted: its status, its fault, or `stdio` for an answer on a process's stdout. */
function statusKey(out: Outcome): string {
  if (out.status !== undefined) return String(out.status);
  return out.fault ?? (out.rpc !== undefined ? 'stdio' : 'client');
}

/** How an outcome's JSON-RPC answer is counted: a designed -32603 with its reason. */
function rpcKey(out: Outcome): string | undefined {
  if (out.rpc === '-32603' && out.reason) return `-32603(${out.reason})`;
  return out.rpc;
}

/** A request in one line, long parts cut: enough to replay it by hand. */
export function describe(req: FuzzRequest): string {
  const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);
  if (req.raw) return `raw bytes: ${JSON.stringify(cut(req.raw.toString('latin1'), 400))}`;
  const headers = Object.entries(req.headers)
    .map(([k, v]) => `${k}: ${cut(JSON.stringify(v), 80)}`)
    .join('; ');
  const body = req.body ? ` body ${JSON.stringify(cut(req.body.toString('latin1'), 300))}` : '';
  return `${req.method} ${cut(req.target, 200)} [${headers}]${body}`;
}

function fmt(h: Record<string, number>): string {
  return Object.entries(h)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}:${v}`)
    .join(' ');
}
