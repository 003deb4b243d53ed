import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

let ticks: number | undefined;

/** Clock ticks per second of /proc CPU times (`getconf CLK_TCK`, 100 on Linux in practice). */
function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; NaN once it is
 * gone. Fields 14 and 15 count after the command name, which is in parentheses and may hold spaces.
 */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // rest[0] is field 3 (state), so field 14 (utime) is rest[11] and field 15 (stime) rest[12].
    return (Number(rest[11]) + Number(rest[12])) / clockTicks();
  } catch {
    return NaN;
  }
}

/** Resident memory of a process, MiB (VmRSS of /proc/<pid>/status); NaN once it is gone. */
export function processRssMiB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Peak resident memory of a process, MiB (VmHWM); NaN once it is gone. */
export function peakRssMiB(pid: number): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Parses `INFO` text into a map of `field → value`. */
export function parseInfo(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) out.set(line.slice(0, i), line.slice(i + 1));
  }
  return out;
}

/** Redis CPU seconds so far (`used_cpu_sys` + `used_cpu_user` of `INFO cpu`). */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = parseInfo(await redis.info('cpu'));
  return Number(info.get('used_cpu_sys')) + Number(info.get('used_cpu_user'));
}

/** Calls and microseconds spent so far in one command (`INFO commandstats`). */
export interface CommandStat {
  calls: number;
  usec: number;
}

/**
 * Calls and time per command so far (`INFO commandstats`), commands run inside scripts included:
 * a script's time also holds the time of the commands it ran.
 */
export async function redisCommandCalls(redis: Redis): Promise<Map<string, CommandStat>> {
  const out = new Map<string, CommandStat>();
  for (const [field, value] of parseInfo(await redis.info('commandstats'))) {
    const m = /^calls=(\d+),usec=(\d+)/.exec(value);
    if (field.startsWith('cmdstat_') && m)
      out.set(field.slice('cmdstat_'.length), { calls: Number(m[1]), usec: Number(m[2]) });
  }
  return out;
}

/** Per-command calls and time between two {@link redisCommandCalls} readings. */
export function diffCalls(
  before: Map<string, CommandStat>,
  after: Map<string, CommandStat>,
): Map<string, CommandStat> {
  const out = new Map<string, CommandStat>();
  for (const [cmd, n] of after) {
    const was = before.get(cmd) ?? { calls: 0, usec: 0 };
    if (n.calls > was.calls) out.set(cmd, { calls: n.calls - was.calls, usec: n.usec - was.usec });
  }
  return out;
}

/** Commands Redis has processed so far (`INFO stats` total_commands_processed). */
export async function redisCommandsProcessed(redis: Redis): Promise<number> {
  return Number(parseInfo(await redis.info('stats')).get('total_commands_processed'));
}
