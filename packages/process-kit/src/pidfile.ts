import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

// A pid file holds "<pid> <marker>": the marker is a piece of the process's command line, so a
// recycled pid is not mistaken for the process we recorded.

/** The pid recorded in `file` if that process is still alive and still the one recorded. */
export async function livePidFrom(file: string): Promise<number | undefined> {
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

/** Records `pid` and a piece of its command line in `file`. */
export async function writePid(file: string, pid: number, marker: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${pid} ${marker}\n`);
}

/** Forgets a recorded pid. */
export async function removePid(file: string): Promise<void> {
  await rm(file, { force: true });
}

/** Sends SIGTERM to `pid` and waits up to `graceMs` for it to go, then SIGKILL. */
export async function terminatePid(pid: number, graceMs = 10_000): Promise<void> {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive()) process.kill(pid, 'SIGKILL');
}

/**
 * Stops every process recorded in `dir/*.pid` (except `keep`) that is still running — what an
 * earlier launcher that was killed outright left behind — and removes the pid files. Files whose
 * names start with an earlier entry of `order` go first.
 */
export async function stopLeftovers(
  dir: string,
  keep: string,
  order: readonly string[],
  log: (line: string) => void,
): Promise<void> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith('.pid') && f !== keep);
  } catch {
    return;
  }
  const rank = (f: string) => {
    const i = order.findIndex((prefix) => f.startsWith(prefix));
    return i < 0 ? order.length : i;
  };
  files.sort((a, b) => rank(a) - rank(b));
  for (const f of files) {
    const pid = await livePidFrom(join(dir, f));
    if (pid !== undefined) {
      log(`stopping ${f.slice(0, -4)} (pid ${pid}), left running by an earlier npm start`);
      await terminatePid(pid);
    }
    await removePid(join(dir, f));
  }
}
