import { FailureCode, type TaskMessage } from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { errorText } from '../errors.ts';
import type { TaskOutcome } from './acks.ts';

/**
 * An agent's deep health check (the `health` option): resolves true when the agent can do its
 * work (model loaded, GPU free, tools reachable). `signal` aborts when the check times out.
 */
export type HealthCheck = (signal: AbortSignal) => boolean | Promise<boolean>;

/** Why a health check did not pass, as the probe's failure reports it. */
function failureText(err: unknown): string {
  return `health check failed: ${errorText(err)}`.slice(0, 1024);
}

/**
 * Answers a liveness probe from registry-sync, without the handler. It went through the same
 * read, slot, receipt and XACK as any task, which is what it tests: an agent whose slots are all
 * held by stuck handlers does not read it. With a `health` check, the probe also asks the agent:
 * `false`, a throw or no answer within `timeoutMs` fails the probe (registry-sync counts failed
 * probes in a row; docs/PROTOCOL.md §6). Not remembered as completed (probes would push real
 * results out of the cache), and logged at debug only, since they come every few seconds.
 */
export async function answerProbe(
  task: TaskMessage,
  log: () => Logger,
  health: HealthCheck | undefined,
  timeoutMs: number,
): Promise<TaskOutcome> {
  try {
    JSON.parse(task.payload);
  } catch {
    return {
      stage: 'failed',
      error: 'payload is not valid JSON text',
      errorCode: FailureCode.invalidPayload,
      retryable: false,
    };
  }
  if (health !== undefined) {
    const started = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const err = new Error(`no answer within ${timeoutMs} ms`);
        controller.abort(err);
        reject(err);
      }, timeoutMs);
    });
    try {
      const ok = await Promise.race([
        Promise.resolve().then(() => health(controller.signal)),
        timeout,
      ]);
      if (ok !== true) {
        log().warn('health check said no; probe failed');
        return {
          stage: 'failed',
          error: 'health check failed: it returned false',
          errorCode: FailureCode.healthCheckFailed,
          retryable: false,
          durationMs: Math.round(performance.now() - started),
        };
      }
    } catch (err: unknown) {
      log().warn({ err }, 'health check failed; probe failed');
      return {
        stage: 'failed',
        error: failureText(err),
        errorCode: FailureCode.healthCheckFailed,
        retryable: false,
        durationMs: Math.round(performance.now() - started),
      };
    } finally {
      clearTimeout(timer);
    }
  }
  log().debug('answering liveness probe');
  return { stage: 'completed', result: task.payload, durationMs: 0 };
}
