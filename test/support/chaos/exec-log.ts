/**
 * The execution log the chaos agents append to and the test reads: one JSON line per handler
 * start and end, with the process that ran it.
 */
import { open, readFile } from 'node:fs/promises';

/** The capability every chaos agent serves. */
export const CHAOS_CAPABILITY = 'chaos';

/** What an agent prints on stdout once registered (the test waits for it). */
export const REGISTERED_MARK = 'CHAOS_AGENT_REGISTERED';

/** One line of the execution log. */
export interface ExecLine {
  ev: 'start' | 'done';
  task_id: string;
  attempt: number;
  agent_id: string;
  pid: number;
  /** Epoch ms on the agent's clock (the same host as the test). */
  at: number;
}

/** One handler run: its start, and its end if the process lived to finish it. */
export interface Execution {
  task_id: string;
  attempt: number;
  agent_id: string;
  pid: number;
  startedAt: number;
  doneAt?: number;
}

/** Reads the log into executions; a torn last line (a SIGKILL mid-write) is skipped. */
export async function readExecutions(path: string): Promise<Execution[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  const runs: Execution[] = [];
  // Runs started and not yet ended, by process, task and attempt.
  const open = new Map<string, Execution[]>();
  for (const raw of text.split('\n')) {
    if (!raw) continue;
    let line: ExecLine;
    try {
      line = JSON.parse(raw) as ExecLine;
    } catch {
      continue;
    }
    const key = `${line.pid}|${line.task_id}|${line.attempt}`;
    if (line.ev === 'start') {
      const run: Execution = {
        task_id: line.task_id,
        attempt: line.attempt,
        agent_id: line.agent_id,
        pid: line.pid,
        startedAt: line.at,
      };
      runs.push(run);
      open.set(key, [...(open.get(key) ?? []), run]);
    } else {
      const run = open.get(key)?.shift();
      if (run) run.doneAt = line.at;
    }
  }
  return runs;
}

/**
 * Follows the log as it grows and tells how many handler runs a process has open (started, not
 * ended): the test pauses an agent while it is in the middle of work, so that it has results to
 * deliver late.
 */
export class ExecTail {
  private offset = 0;
  private partial = '';
  private readonly openRuns = new Map<number, number>();

  constructor(private readonly path: string) {}

  /** Reads what was appended since the last call; returns the open runs of `pid`. */
  async openOf(pid: number): Promise<number> {
    const fh = await open(this.path, 'r');
    try {
      const { size } = await fh.stat();
      if (size > this.offset) {
        const buf = Buffer.alloc(size - this.offset);
        const { bytesRead } = await fh.read(buf, 0, buf.length, this.offset);
        this.offset += bytesRead;
        const lines = (this.partial + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
        this.partial = lines.pop() ?? '';
        for (const raw of lines) this.note(raw);
      }
    } finally {
      await fh.close();
    }
    return this.openRuns.get(pid) ?? 0;
  }

  private note(raw: string): void {
    let line: ExecLine;
    try {
      line = JSON.parse(raw) as ExecLine;
    } catch {
      return;
    }
    this.openRuns.set(
      line.pid,
      (this.openRuns.get(line.pid) ?? 0) + (line.ev === 'start' ? 1 : -1),
    );
  }
}
