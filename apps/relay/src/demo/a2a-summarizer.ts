import { Role, TaskState, type Message, type Part, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { msField, pause } from './requests.ts';

/** Words a summary keeps. */
const SUMMARY_WORDS = 12;

const textPart = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

/** An agent message of one text part. */
function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function statusUpdate(
  taskId: string,
  contextId: string,
  state: TaskState,
  text?: string,
): TaskStatusUpdateEvent {
  return {
    taskId,
    contextId,
    status: {
      state,
      message: text === undefined ? undefined : agentMessage(taskId, contextId, text),
      timestamp: new Date().toISOString(),
    },
    metadata: undefined,
  };
}

/** What a message asks: the text (a data part's `text`, else its text parts) and its data part. */
function inputOf(message: Message): { text: string; data: Record<string, unknown> } {
  let data: Record<string, unknown> = {};
  const texts: string[] = [];
  for (const { content } of message.parts) {
    if (content?.$case === 'text') texts.push(content.value);
    const value: unknown = content?.$case === 'data' ? content.value : undefined;
    if (typeof value === 'object' && value !== null) data = value as Record<string, unknown>;
  }
  return { text: typeof data.text === 'string' ? data.text : texts.join('\n'), data };
}

/** The first {@link SUMMARY_WORDS} words of `text`, in two halves (the stream's two chunks). */
export function summaryChunks(text: string): [string, string] {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length === 0) return ['(nothing to summarize)', ''];
  const kept = words.slice(0, SUMMARY_WORDS);
  const cut = Math.ceil(kept.length / 2);
  const tail = kept.slice(cut).join(' ') + (words.length > SUMMARY_WORDS ? ' …' : '');
  return [kept.slice(0, cut).join(' ') + (tail ? ' ' : ''), tail];
}

/**
 * The demo agent's one skill, `summarize`: it publishes the task, a `working` status, the
 * summary as two chunks of artifact `summary`, and `completed`. A data part's `delay_ms` waits
 * before the chunks, `fail: true` ends the task `failed` and `reject: true` `rejected`. A
 * cancel stops the wait and ends the task `canceled`, reported to `onCancel` with its context id.
 */
export class SummarizeExecutor implements AgentExecutor {
  readonly #running = new Map<string, { stop: AbortController; contextId: string }>();
  readonly #onCancel: ((id: string) => void) | undefined;

  constructor(onCancel?: (id: string) => void) {
    this.#onCancel = onCancel;
  }

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = context;
    const { text, data } = inputOf(userMessage);
    const stop = new AbortController();
    this.#running.set(taskId, { stop, contextId });
    try {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            message: undefined,
            timestamp: undefined,
          },
          artifacts: [],
          history: [userMessage],
          metadata: undefined,
        }),
      );
      bus.publish(
        AgentEvent.statusUpdate(
          statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING, 'summarizing'),
        ),
      );
      if (data.fail === true || data.reject === true) {
        const state =
          data.fail === true ? TaskState.TASK_STATE_FAILED : TaskState.TASK_STATE_REJECTED;
        const said = data.fail === true ? 'asked to fail' : 'asked to reject';
        bus.publish(AgentEvent.statusUpdate(statusUpdate(taskId, contextId, state, said)));
        return;
      }
      // Cancelled: cancelTask has published the final state.
      if (!(await pause(msField(data, 'delay_ms'), stop.signal))) return;
      const chunks = summaryChunks(text);
      chunks.forEach((chunk, i) =>
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId: 'summary',
              name: 'summary',
              description: '',
              parts: [textPart(chunk)],
              metadata: undefined,
              extensions: [],
            },
            append: i > 0,
            lastChunk: i === chunks.length - 1,
            metadata: undefined,
          }),
        ),
      );
      bus.publish(
        AgentEvent.statusUpdate(statusUpdate(taskId, contextId, TaskState.TASK_STATE_COMPLETED)),
      );
    } finally {
      this.#running.delete(taskId);
    }
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const running = this.#running.get(taskId);
    if (!running) return;
    running.stop.abort();
    this.#onCancel?.(running.contextId);
    bus.publish(
      AgentEvent.statusUpdate(
        statusUpdate(taskId, running.contextId, TaskState.TASK_STATE_CANCELED, 'cancelled'),
      ),
    );
  };
}
