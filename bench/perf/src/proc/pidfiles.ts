import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// Each session keeps `<sessionDir>/<name>.pid` holding "<pid> <marker>" for every process it
// starts, and `owner.pid` for itself. The marker (a piece of the command line) keeps a recycled
// pid from being taken for ours.

/** Records a child's pid. */
export async function recordPid(sessionDir: string, name: string, pid: number, marker: string): Promise<void> {
  await mkdir(sessionDir, { recursive: true });
  await writeFile(join(sessionDir, `${name}.pid`), `${pid} ${marker}\n`);
}

/** Forgets a child's pid once it is stopped. */
export async function forgetPid(sessionDir: string, name: string): Promise<void> {
  await rm(join(sessionDir, `${name}.pid`), { force: true });
}

/** The pid recorded in `file` if that process still runs the command recorded with it. */
async function livePid(file: string): Promise<number | undefined> {
  let text: string;
  try {
    text = (await readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
  const space = text.indexOf(' ');
  const pid = Number(space < 0 ? text : text.slice(0, space));
  const marker = space < 0 ? '' : text.slice(space + 1);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
    return cmdline.includes(marker) ? pid : undefined;
  } catch {
    return undefined;
  }
}

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
