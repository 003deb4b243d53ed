import { describeExit, outputTail, type ManagedProcess } from './proc.ts';
import { isWaitTimeoutError, waitFor } from './wait.ts';

/**
 * Polls `probe` until it is true, failing fast if `proc` exits first. Either failure says which
 * process, why, and shows the tail of its output.
 */
export async function awaitReady(
  proc: ManagedProcess,
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  let outcome: 'ready' | 'exited';
  try {
    outcome = await waitFor(
      async () => (proc.hasExited() ? 'exited' : (await probe()) ? 'ready' : undefined),
      { timeoutMs, intervalMs: 50, message: `${proc.name} (pid ${proc.pid}): ${what}` },
    );
  } catch (err: unknown) {
    if (!isWaitTimeoutError(err)) throw err;
    throw new Error(`${err.message}; its last output:\n${outputTail(proc)}`, { cause: err });
  }
  if (outcome === 'exited') {
    const code = await proc.exited;
    throw new Error(
      `${proc.name} exited (${describeExit(proc, code)}) before ${what}; its last output:\n${outputTail(proc)}`,
    );
  }
}
