import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * Where `--modes router-only` puts its processes: the process under test alone on one CPU, every
 * other process on another, so the CPU it uses is its own and never waits behind Redis or the
 * load it is measured under.
 */
export interface Pinning {
  /** `taskset -c` list of the process under test (the router, the floor's server). */
  measured: string;
  /** `taskset -c` list of everything else: Redis, registry-sync, the stub agent, the callers. */
  rest: string;
}

/** The pinning, or why there is none (no taskset, a single CPU): then every process runs anywhere. */
export type PinningPlan = { pinned: true; cpus: Pinning } | { pinned: false; why: string };

/** True when `taskset` runs here (util-linux). */
function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * CPU 0 for the process under test, CPU 1 for the rest, when taskset is there and this process
 * may use both (its own affinity mask is what its children inherit).
 */
export function planPinning(): PinningPlan {
  if (cpus().length < 2) return { pinned: false, why: `${cpus().length} CPU only` };
  if (!hasTaskset()) return { pinned: false, why: 'taskset (util-linux) is not installed' };
  return { pinned: true, cpus: { measured: '0', rest: '1' } };
}

/**
 * Moves a running process and every thread it has to `cpuList` (`taskset -a -p -c`): for
 * processes the bench does not start through `ChildSet.spawnNode`, such as redis-server.
 * Threads it starts later inherit the affinity of the thread that starts them.
 */
export function pinProcess(pid: number, cpuList: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
}

/** The CPUs a process may run on (`Cpus_allowed_list` of /proc/<pid>/status); `?` once it is gone. */
export function allowedCpus(pid: number): string {
  try {
    return (
      /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?'
    );
  } catch {
    return '?';
  }
}
