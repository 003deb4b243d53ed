import type { Logger } from 'pino';
import { startTracing, stopTracing } from './tracing/start.ts';

/** What a process entry point runs: something that listens and closes gracefully. */
export interface Listening {
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts a service and stops it with grace on SIGTERM or SIGINT: stop accepting, finish what is
 * in flight, export the spans left (when tracing, as `agent-reach-<name>`), exit 0. A failure to
 * start exits 1 with the reason logged.
 */
export function runMain(name: string, logger: Logger, start: () => Promise<Listening>): void {
  const main = async () => {
    // Before the service is built: its hot paths read `tracing.on` as they run.
    await startTracing({ serviceName: `agent-reach-${name}`, logger });
    const service = await start();
    const address = await service.listen();
    logger.info({ address }, `${name} listening`);
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, `${name} shutting down`);
      service
        .close()
        .then(() => stopTracing())
        .then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  };
  main().catch((err: unknown) => {
    logger.fatal({ err }, `${name} failed to start`);
    process.exit(1);
  });
}
