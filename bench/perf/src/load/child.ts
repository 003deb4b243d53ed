/**
 * Plumbing every bench child shares: tell the orchestrator it is ready, and exit when the
 * orchestrator goes away (its IPC channel closes) or asks it to stop, closing what it holds first.
 */

let closing: Promise<void> | undefined;

/** Sends `{type: 'ready', ...extra}` over the IPC channel. */
export function announceReady(extra: Record<string, unknown> = {}): void {
  process.send?.({ type: 'ready', ...extra });
}

/**
 * Runs `close` once and exits when the IPC channel closes (the orchestrator died or is done) or on
 * SIGTERM/SIGINT. A close that hangs is cut short after `graceMs`.
 */
export function exitWithParent(close: () => Promise<void>, graceMs = 5000): void {
  const stop = (code: number) => {
    closing ??= (async () => {
      const timer = setTimeout(() => process.exit(code), graceMs);
      timer.unref();
      try {
        await close();
      } catch {
        // exiting anyway
      }
      process.exit(code);
    })();
  };
  process.on('disconnect', () => stop(0));
  process.once('SIGTERM', () => stop(0));
  process.once('SIGINT', () => stop(0));
}

/** Reads a required environment variable. */
export function env(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`bench child: ${name} is not set`);
  return value;
}

/** Reads a numeric environment variable with a default. */
export function envInt(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n))
    throw new Error(`bench child: ${name} must be an integer, got ${value}`);
  return n;
}

/** The agents a fleet child serves: `AGENTS`, `<agent_id>=<capability>` pairs separated by commas. */
export function agentSpecs(): { agentId: string; capability: string }[] {
  return env('AGENTS')
    .split(',')
    .map((spec) => {
      const [agentId, capability] = spec.split('=');
      if (!agentId || !capability) throw new Error(`bench child: bad AGENTS entry "${spec}"`);
      return { agentId, capability };
    });
}
