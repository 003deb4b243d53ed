import { sleep } from '../clock.ts';
import type { Child } from '../proc/children.ts';

/** GET `url` as JSON; undefined when it fails, answers non-200 or takes over 2 s. */
export async function getJson(url: string, headers: Record<string, string> = {}): Promise<unknown> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
    if (res.status !== 200) {
      await res.arrayBuffer();
      return undefined;
    }
    return await res.json();
  } catch {
    return undefined;
  }
}

/**
 * Polls `check` until it returns true; throws after `timeoutMs`, or at once when `child` exits,
 * with the child's last output.
 */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  child?: Child,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child?.hasExited())
      throw new Error(`${child.name} exited while waiting for ${what}:\n${child.output()}`);
    if (await check()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${child ? `:\n${child.output()}` : ''}`);
    await sleep(100);
  }
}
