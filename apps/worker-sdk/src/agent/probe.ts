import {
  failingDependencies,
  FailureCode,
  probeHealthOf,
  type ProbeHealth,
  type TaskMessage,
} from '@agent-reach/protocol';
import type { Logger } from 'pino';
import { errorText } from '../errors.ts';
import type { TaskOutcome } from './acks.ts';

/**
 * What a health check may answer besides true/false: the state of each dependency the agent
 * needs, e.g. `{ ok: false, dependencies: { 'model-gateway': { ok: false, latency_ms: 3000,
 * detail: 'timeout' } } }`. Without `ok`, the probe passes when every dependency is ok. Agents
 * that call a dependency by the same name let registry-sync see it fail fleet-wide
 * (docs/PROTOCOL.md §6, Dependencies).
 */
export interface HealthAnswer {
  ok?: boolean;
  dependencies?: Record<string, { ok: boolean; latency_ms?: number; detail?: string }>;
}

/**
 * An agent's deep health check (the `health` option): resolves true, or a {@link HealthAnswer}
 * that is ok, when the agent can do its work (model loaded, GPU free, tools reachable). `signal`
 * aborts when the check times out.
 */
export type HealthCheck = (
  signal: AbortSignal,
) => boolean | HealthAnswer | Promise<boolean | HealthAnswer>;

/** A check that said no, in the probe's failure: the dependencies down, when it named them. */
function failedText(detail: ProbeHealth | undefined): string {
  const down = failingDependencies(detail);
  if (down.length > 0)
    return `health check failed: dependencies down: ${down.join(', ')}`.slice(0, 1024);
  return detail
    ? 'health check failed: it answered ok false'
    : 'health check failed: it returned false';
}

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
      const answer: unknown = await Promise.race([
        Promise.resolve().then(() => health(controller.signal)),
        timeout,
      ]);
      // A plain true/false is sent as before, without a `health` field.
      const detail = typeof answer === 'object' ? probeHealthOf(answer) : undefined;
      const ok = answer === true || detail?.ok === true;
      if (!ok) {
        log().warn(
          { dependencies: failingDependencies(detail) },
          'health check said no; probe failed',
        );
        return {
          stage: 'failed',
          error: failedText(detail),
          errorCode: FailureCode.healthCheckFailed,
          retryable: false,
          durationMs: Math.round(performance.now() - started),
          ...(detail ? { health: detail } : {}),
        };
      }
      if (detail) {
        log().debug('answering probe with dependency detail');
        return { stage: 'completed', result: task.payload, durationMs: 0, health: detail };
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
