import type { Logger } from 'pino';
import { SHARED_SETTINGS } from '@agent-reach/protocol';
import { enumSettingFrom } from './enum-setting.ts';
import { idleCompactFrom, startIdleCompaction } from './idle-compaction.ts';
import { installProcessGuard } from './process-guard.ts';
import { setRequestContextMode, type RequestContextMode } from './request-context.ts';
import { startTracing, stopTracing } from './tracing/start.ts';

/** What a process entry point runs: something that listens and closes gracefully. */
export interface Listening {
  listen(): Promise<string>;
  close(): Promise<void>;
}

/** Options of {@link runMain}. */
export interface RunMainOptions {
  /**
   * How long the service may take to close after an uncaught exception before the process
   * exits anyway. @default 5000
   */
  crashCloseMs?: number;
}

/**
 * `REACH_REQUEST_CONTEXT`: how a failure is tied to its request (`recent` when unset; see
 * {@link RequestContextMode}).
 * @throws an Error naming the setting for any other value
 */
export function requestContextModeFrom(value: string | undefined): RequestContextMode {
  return enumSettingFrom(SHARED_SETTINGS.requestContext, value);
}

/** Exit code after an uncaught exception: a failure, for a supervisor to restart. */
const CRASH_EXIT_CODE = 1;

/**
 * Starts a service and stops it with grace on SIGTERM or SIGINT: stop accepting, finish what is
 * in flight, export the spans left (when tracing, as `agent-reach-<name>`), exit 0. A failure to
 * start exits 1 with the reason logged. Guards the process ({@link installProcessGuard}): an
 * unhandled rejection is logged with its request and counted, and the service serves on; an
 * uncaught exception is logged at `fatal` with its request, then the service closes (for at most
 * `crashCloseMs`) and the process exits 1. Once listening, it compacts the heap when the process
 * goes quiet after a burst (`REACH_IDLE_COMPACT`, {@link startIdleCompaction}).
 */
export function runMain(
  name: string,
  logger: Logger,
  start: () => Promise<Listening>,
  opts: RunMainOptions = {},
): void {
  const crashCloseMs = opts.crashCloseMs ?? 5000;
  let service: Listening | undefined;
  let exitCode = 0;
  let closing: Promise<void> | undefined;
  let deadline: NodeJS.Timeout | undefined;
  // One close for a signal and a crash alike; a crash during a signal's close makes the exit
  // code 1 and bounds the wait.
  const closeAndExit = (code: number, boundMs?: number) => {
    exitCode = Math.max(exitCode, code);
    if (boundMs !== undefined && deadline === undefined) {
      deadline = setTimeout(() => {
        logger.error({ boundMs }, `${name} did not close within ${boundMs} ms; exiting`);
        process.exit(exitCode);
      }, boundMs);
    }
    closing ??= Promise.resolve()
      .then(() => service?.close())
      .then(() => stopTracing())
      .then(
        () => process.exit(exitCode),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(Math.max(exitCode, 1));
        },
      );
  };
  installProcessGuard({
    logger,
    onUncaughtException: () => closeAndExit(CRASH_EXIT_CODE, crashCloseMs),
  });
  const main = async () => {
    setRequestContextMode(requestContextModeFrom(process.env.REACH_REQUEST_CONTEXT));
    const idleCompact = idleCompactFrom(process.env.REACH_IDLE_COMPACT);
    // Before the service is built: its hot paths read `tracing.on` as they run.
    await startTracing({ serviceName: `agent-reach-${name}`, logger });
    service = await start();
    const address = await service.listen();
    logger.info({ address }, `${name} listening`);
    if (idleCompact) startIdleCompaction({ logger });
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, `${name} shutting down`);
      closeAndExit(0);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  };
  main().catch((err: unknown) => {
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  });
}
