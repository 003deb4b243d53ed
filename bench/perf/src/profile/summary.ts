import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The parts of a V8 `.cpuprofile` this reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
    children?: number[];
  }[];
  startTime: number;
  endTime: number;
  samples?: number[];
  /** µs between samples, on V8's clock (CLOCK_MONOTONIC on Linux: the clock of monoMs()). */
  timeDeltas?: number[];
}

/** A stretch of time on the monotonic clock, ms (as monoMs() reads it). */
export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

/** One line of a summary: a frame or an area, with its share of the busy (non-idle) time. */
export interface ProfileLine {
  name: string;
  ms: number;
  /** Share of busy time, 0–100. */
  pct: number;
}

/** What a profile says, in a few lines. */
export interface ProfileSummary {
  /** Sampled wall time, ms. */
  wallMs: number;
  /** Time not idle, ms. */
  busyMs: number;
  /** Functions by self time. */
  self: ProfileLine[];
  /** Self time by package or workspace folder (`ioredis`, `fastify`, `apps/router`, `node`, `(gc)`). */
  areas: ProfileLine[];
  /** The project's own functions by inclusive time (themselves and what they call). */
  ownInclusive: ProfileLine[];
}

const SPECIAL: Record<string, string> = {
  '(idle)': '(idle)',
  '(program)': '(program)',
  '(garbage collector)': '(gc)',
  '(root)': '(root)',
};

/** The area a frame belongs to: npm package, workspace folder, node internals or a V8 pseudo-frame. */
export function areaOf(url: string, functionName: string): string {
  if (SPECIAL[functionName] && url === '') return SPECIAL[functionName];
  if (url.startsWith('node:')) return 'node';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  const ws = /\/(apps|packages|bench)\/([^/]+)\//.exec(url);
  if (ws) return `${ws[1]}/${ws[2]}`;
  return url === '' ? '(native)' : 'other';
}

function frameName(f: CpuProfile['nodes'][number]['callFrame']): string {
  const file = f.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/(node_modules|apps|packages|bench)\//, '$1/');
  return `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
}

/**
 * Hit counts per node from the samples taken inside `window`, or the profile's own hit counts
 * (with the whole profile's wall time) when there is no window or no sample list.
 */
function hitsIn(
  p: CpuProfile,
  window: TimeWindow | undefined,
): { hits: Map<number, number>; wallMs: number } {
  if (!window || !p.samples || !p.timeDeltas) {
    return {
      hits: new Map(p.nodes.map((n) => [n.id, n.hitCount ?? 0])),
      wallMs: (p.endTime - p.startTime) / 1000,
    };
  }
  const hits = new Map<number, number>();
  let t = p.startTime;
  const from = window.fromMs * 1000;
  const to = window.toMs * 1000;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < from || t > to) continue;
    const id = p.samples[i] as number;
    hits.set(id, (hits.get(id) ?? 0) + 1);
  }
  return {
    hits,
    wallMs: Math.max(0, Math.min(to, p.endTime) - Math.max(from, p.startTime)) / 1000,
  };
}

/**
 * Summarises one profile — inside `window` only, when given: self time by frame and by area,
 * inclusive time of the project's own code.
 */
export function summarizeProfile(p: CpuProfile, top = 15, window?: TimeWindow): ProfileSummary {
  const { hits, wallMs } = hitsIn(p, window);
  let count = 0;
  for (const n of hits.values()) count += n;
  const perSample = count > 0 ? wallMs / count : 0;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  let idle = 0;
  for (const n of p.nodes) {
    const t = (hits.get(n.id) ?? 0) * perSample;
    if (t === 0) continue;
    if (n.callFrame.functionName === '(idle)') {
      idle += t;
      continue;
    }
    const name = frameName(n.callFrame);
    self.set(name, (self.get(name) ?? 0) + t);
    const area = areaOf(n.callFrame.url, n.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + t);
  }
  const busyMs = wallMs - idle;
  // Inclusive time of the project's own functions, each counted once per stack.
  const inclusive = new Map<string, number>();
  const walk = (id: number, onStack: Set<string>): number => {
    const n = byId.get(id);
    if (!n) return 0;
    let t = (hits.get(n.id) ?? 0) * perSample;
    const name = frameName(n.callFrame);
    const own =
      /^(apps|packages)\//.test(areaOf(n.callFrame.url, n.callFrame.functionName)) &&
      !onStack.has(name);
    if (own) onStack.add(name);
    for (const c of n.children ?? []) t += walk(c, onStack);
    if (own) {
      onStack.delete(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + t);
    }
    return t;
  };
  const root = p.nodes[0];
  if (root) walk(root.id, new Set());
  const lines = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms, pct: busyMs > 0 ? (100 * ms) / busyMs : 0 }));
  return { wallMs, busyMs, self: lines(self), areas: lines(areas), ownInclusive: lines(inclusive) };
}

/** Renders a summary for the terminal and for docs/PERFORMANCE.md. */
export function renderSummary(title: string, s: ProfileSummary): string {
  const fmt = (l: ProfileLine) =>
    `  ${l.pct.toFixed(1).padStart(5)} %  ${l.ms.toFixed(0).padStart(6)} ms  ${l.name}`;
  return [
    `${title}: ${(s.busyMs / 1000).toFixed(2)} s busy of ${(s.wallMs / 1000).toFixed(2)} s sampled`,
    ' by area (self time):',
    ...s.areas.map(fmt),
    ' top frames (self time):',
    ...s.self.map(fmt),
    ' project code (inclusive time):',
    ...s.ownInclusive.map(fmt),
  ].join('\n');
}

/**
 * Reads the main-thread `.cpuprofile`s in `dir` (node names them
 * `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`; thread 0 is the main thread, others are
 * tsx's module-loader worker).
 */
export async function readProfiles(
  dir: string,
): Promise<{ file: string; pid: number; profile: CpuProfile }[]> {
  const files = (await readdir(dir)).filter(
    (f) => f.endsWith('.cpuprofile') && f.split('.')[4] === '0',
  );
  return Promise.all(
    files.map(async (file) => ({
      file: join(dir, file),
      pid: Number(file.split('.')[3]),
      profile: JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile,
    })),
  );
}
