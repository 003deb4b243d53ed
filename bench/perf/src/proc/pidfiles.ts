import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { livePidFrom, removePid, writePid } from '@agent-reach/testkit';

// Each session keeps `<sessionDir>/<name>.pid` holding "<pid> <marker>" for every process it
// starts, and `owner.pid` for itself. The marker (a piece of the command line) keeps a recycled
// pid from being taken for ours.

/** Records a child's pid. */
export async function recordPid(
  sessionDir: string,
  name: string,
  pid: number,
  marker: string,
): Promise<void> {
  await writePid(join(sessionDir, `${name}.pid`), pid, marker);
}

/** Forgets a child's pid once it is stopped. */
export async function forgetPid(sessionDir: string, name: string): Promise<void> {
  await removePid(join(sessionDir, `${name}.pid`));
}

/** The pid recorded in `file` if that process still runs the command recorded with it. */
const livePid = livePidFrom;

/**
 * Stops what earlier sessions under `root` left running — only sessions whose orchestrator is
 * gone (killed outright), so a bench another engineer runs at the same time is left alone —
 * and removes their folders. Returns how many processes it stopped.
 */
export async function stopLeftovers(root: string, log: (line: string) => void): Promise<number> {
  let sessions: string[];
  try {
    sessions = await readdir(root);
  } catch {
    return 0;
  }
  let stopped = 0;
  for (const s of sessions) {
    const dir = join(root, s);
    if ((await livePid(join(dir, 'owner.pid'))) !== undefined) continue;
    let files: string[];
    try {
      files = (await readdir(dir)).filter((f) => f.endsWith('.pid') && f !== 'owner.pid');
    } catch {
      continue;
    }
    for (const f of files) {
      const pid = await livePid(join(dir, f));
      if (pid === undefined) continue;
      log(`stopping ${f.slice(0, -4)} (pid ${pid}), left running by an earlier bench session`);
      try {
        process.kill(pid, 'SIGKILL');
        stopped++;
      } catch {
        // gone meanwhile
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
  return stopped;
}
