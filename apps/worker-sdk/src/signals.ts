import type { Logger } from 'pino';

/** Anything with an async, idempotent `close()` — a ReachAgent, a ReachClient. */
export interface Closable {
  close(): Promise<void>;
}

/** Settings of {@link installSignalHandlers}. */
export interface SignalHandlerOptions {
  /**
   * Signals that start a graceful shutdown.
   * @default ['SIGTERM', 'SIGINT']
   */
  signals?: readonly NodeJS.Signals[];
  /**
   * Called with 0 after every target closed, 1 if one failed, 130 on a second signal.
   * @default process.exit
   */
  exit?: (code: number) => void;
  /**
   * Where the shutdown is logged.
   * @default no logging
   */
  logger?: Logger;
}

/**
 * On SIGTERM or SIGINT, closes every target (agents drain their in-flight tasks) and exits 0.
 * A second signal while closing exits at once. Returns a function that removes the handlers.
 */
export function installSignalHandlers(
  targets: Closable | readonly Closable[],
  options: SignalHandlerOptions = {},
): () => void {
  const list: readonly Closable[] = Array.isArray(targets) ? targets : [targets as Closable];
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const log = options.logger?.child({ module: 'signals' });
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      log?.warn({ signal }, 'second signal; exiting without waiting');
      exit(130);
      return;
    }
    closing = true;
    log?.info({ signal }, 'shutting down');
    Promise.all(list.map((t) => t.close())).then(
      () => {
        log?.info('shut down cleanly');
        exit(0);
      },
      (err: unknown) => {
        log?.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const s of signals) process.on(s, onSignal);
  return () => {
    for (const s of signals) process.off(s, onSignal);
  };
}
