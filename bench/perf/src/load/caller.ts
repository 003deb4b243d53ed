import { announceReady, exitWithParent } from './child.ts';
import { closedLoop, openLoop, type Target } from './loops.ts';
import type { FromCaller, Mode, RunRequest, ToCaller } from './protocol.ts';
import { Tracker } from './tracker.ts';

/** Where results are reported: to the current run's tracker. */
export interface ResultSink {
  /**
   * `receivedAt`: when the worker started the task (monotonic ms), NaN if unknown; `hops`: how
   * long each hop of the task took, ms, when the caller can tell.
   */
  complete(key: string, receivedAt: number, hops?: Readonly<Record<string, number>>): void;
  fail(key: string, err: unknown): void;
}

/** A system as one caller process drives it. */
export interface CallerSystem {
  /** flood and paced: the caller submits to the system and learns results asynchronously. */
  queued: Target;
  /** http: one HTTP request per task, answered with its result. */
  http: Target;
  /**
   * Before each run, outside the measured window: set up what `mode` needs and tear down what
   * it does not use, so that nothing the run does not need works during it.
   */
  prepare?(mode: Mode): Promise<void>;
  /** Submission requests sent so far, when the caller counts them (a run reports its share). */
  requestsSent?(): number;
  /** Most tasks per submission request in the next run (`RunRequest.maxBatch`), when it batches. */
  limitBatch?(max: number | undefined): void;
  close(): Promise<void>;
}

/**
 * The main loop of a caller process: sets the system up, says ready, then runs what the
 * orchestrator asks, one run at a time, and answers with the figures.
 */
export function serveCaller(setup: (sink: ResultSink) => Promise<CallerSystem>): void {
  let current: Tracker | undefined;
  const sink: ResultSink = {
    complete: (key, receivedAt, hops) => {
      if (current?.owns(key)) current.complete(key, receivedAt, hops);
    },
    fail: (key, err) => {
      if (current?.owns(key)) current.fail(key, err);
    },
  };
  const reply = (msg: FromCaller) => process.send?.(msg);
  const run = async (system: CallerSystem, req: RunRequest) => {
    const tracker = new Tracker(req.id, req.mode);
    current = tracker;
    system.limitBatch?.(req.maxBatch);
    const requestsBefore = system.requestsSent?.();
    try {
      const target = req.mode === 'http' ? system.http : system.queued;
      const settled =
        req.mode === 'paced'
          ? await openLoop(target, tracker, req)
          : await closedLoop(target, tracker, req);
      tracker.close();
      const requestsAfter = system.requestsSent?.();
      const requests =
        requestsBefore !== undefined && requestsAfter !== undefined
          ? { requests: requestsAfter - requestsBefore }
          : {};
      reply({ type: 'result', result: { ...tracker.result(!settled), ...requests } });
    } finally {
      tracker.close();
      current = undefined;
    }
  };
  setup(sink).then(
    (system) => {
      let queue = Promise.resolve();
      process.on('message', (msg: ToCaller) => {
        if (msg.type === 'prepare') {
          const { mode } = msg;
          queue = queue.then(async () => {
            try {
              await system.prepare?.(mode);
              reply({ type: 'prepared', mode });
            } catch (err: unknown) {
              reply({
                type: 'prepared',
                mode,
                error: err instanceof Error ? err.message : String(err),
              });
            }
          });
          return;
        }
        if (msg.type !== 'run') return;
        queue = queue.then(async () => {
          try {
            await run(system, msg.req);
          } catch (err: unknown) {
            reply({
              type: 'run-error',
              id: msg.req.id,
              message: err instanceof Error ? (err.stack ?? err.message) : String(err),
            });
          }
        });
      });
      exitWithParent(() => system.close());
      announceReady();
    },
    (err: unknown) => {
      process.stderr.write(
        `caller setup failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(1);
    },
  );
}
