import {
  TaskState,
  type Message,
  type StreamResponse,
  type Task,
  type TaskStatus,
} from '@a2a-js/sdk';
import type { CallOutcome, CallRequest } from './endpoint-client.ts';
import { CallCode, clipText, failed } from './failures.ts';
import {
  ArtifactSet,
  chunkValue,
  joinTexts,
  messageText,
  resultOfParts,
  stateName,
  statusProgress,
} from './a2a-parts.ts';

/** States that end a call: the terminal ones, and those that wait for input a relay cannot give. */
const ENDING = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

/**
 * One A2A call as its replies arrive (a stream's events, or a blocking send's task): keeps the
 * task's id (for a cancel) and its artifacts, reports status updates as progress and artifact
 * parts as chunks, and maps the state that ends the call to its outcome.
 */
export class A2ARun {
  /** The A2A task's id, once a reply named it. */
  taskId: string | undefined;
  /** The call ended in a state that leaves the remote task open (input or auth required). */
  leftOpen = false;
  readonly #artifacts = new ArtifactSet();
  readonly #req: Pick<CallRequest, 'onProgress' | 'onChunk'>;

  constructor(req: Pick<CallRequest, 'onProgress' | 'onChunk'>) {
    this.#req = req;
  }

  /** Takes one stream event; returns the outcome when it ends the call. */
  onEvent(event: StreamResponse): CallOutcome | undefined {
    const payload = event.payload;
    switch (payload?.$case) {
      case 'message':
        return this.onMessage(payload.value);
      case 'task':
        return this.onTask(payload.value);
      case 'statusUpdate': {
        const { taskId, status } = payload.value;
        this.taskId ||= taskId;
        if (!status) return undefined;
        if (ENDING.has(status.state)) return this.#end(status);
        this.#req.onProgress(statusProgress(status));
        return undefined;
      }
      case 'artifactUpdate': {
        this.taskId ||= payload.value.taskId;
        this.#artifacts.apply(payload.value);
        for (const part of payload.value.artifact?.parts ?? []) this.#req.onChunk(chunkValue(part));
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /** A reply that is a message, not a task: its parts are the result. */
  onMessage(message: Message): CallOutcome {
    return { kind: 'completed', result: resultOfParts(joinTexts(message.parts)) };
  }

  /** A task snapshot: its artifacts replace those seen; the outcome when its state ends the call. */
  onTask(task: Task): CallOutcome | undefined {
    this.taskId = task.id || this.taskId;
    if (task.artifacts.length > 0) this.#artifacts.reset(task.artifacts);
    const status = task.status;
    return status && ENDING.has(status.state) ? this.#end(status) : undefined;
  }

  /**
   * The outcome of a state that ends the call. `completed`: the artifacts' parts (else the status
   * message's) as the result. `failed` is retryable (like a worker's handler error, the next
   * replica may succeed) and `rejected` is not (the agent refused the task itself): both
   * `A2A_FAILED`. `canceled`: `CANCELLED`. `input-required` and `auth-required`:
   * `A2A_INPUT_REQUIRED`, not retryable, and the task is {@link leftOpen}.
   */
  #end(status: TaskStatus): CallOutcome {
    const text = clipText(messageText(status.message));
    switch (status.state) {
      case TaskState.TASK_STATE_COMPLETED: {
        const parts =
          this.#artifacts.size > 0
            ? this.#artifacts.parts()
            : joinTexts(status.message?.parts ?? []);
        return { kind: 'completed', result: resultOfParts(parts) };
      }
      case TaskState.TASK_STATE_FAILED:
        return failed(CallCode.a2aFailed, text || 'the A2A task failed', true);
      case TaskState.TASK_STATE_REJECTED:
        return failed(CallCode.a2aFailed, text || 'the A2A agent rejected the task', false);
      case TaskState.TASK_STATE_CANCELED:
        return failed(CallCode.cancelled, text || 'the A2A task was canceled', false);
      default:
        this.leftOpen = true;
        return failed(
          CallCode.a2aInputRequired,
          `the A2A task stopped in state ${stateName(status.state)}${text ? `: ${text}` : ''}`,
          false,
        );
    }
  }
}
