import { ROUTES, type AgentView } from '@agent-reach/protocol';
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from './input-schemas.ts';
import type { ApiReply, ReachApi } from './reach-api.ts';

/** How long a capability tool waits for its task's result before answering with the task. */
export const CAPABILITY_TOOL_WAIT_MS = 30_000;

/**
 * Longest wait `submit_task` holds a call for: under the 60 s an MCP client (the SDK's default)
 * waits for an answer, so the answer comes before the client gives up.
 */
export const MAX_TOOL_WAIT_MS = 50_000;

/** The arguments of a tool call, as the client sent them. */
export type ToolArgs = Record<string, unknown>;

/** One MCP tool: what `tools/list` shows, and what a call does through the HTTP API. */
export interface ReachTool extends Tool {
  run(args: ToolArgs, api: ReachApi): Promise<ApiReply>;
}

/** A capability some live agent serves, with the input schema one of them registered. */
export interface LiveCapability {
  capability: string;
  agents: number;
  inputSchema: JsonSchema | undefined;
}

const TASK_ID = { type: 'string', description: 'The task_id from submit_task or a run_ tool' };

/** A UTF-16 surrogate not in a pair: no URI or UTF-8 can carry it (`encodeURIComponent` throws). */
const LONE_SURROGATE = /\p{Cs}/u;

/** The `task_id` argument, as the path of the task it names takes it; else invalid params. */
function taskId(args: ToolArgs): string {
  const id = args.task_id;
  if (typeof id !== 'string' || id === '')
    throw new McpError(ErrorCode.InvalidParams, 'task_id (a string) is required');
  if (LONE_SURROGATE.test(id))
    throw new McpError(ErrorCode.InvalidParams, 'task_id holds a lone UTF-16 surrogate');
  return id;
}

/** `POST /v1/tasks`, with `wait_ms` when asked (capped); a value that is no integer gets the API's INVALID_QUERY. */
function submitPath(waitMs: unknown): string {
  if (waitMs === undefined || waitMs === 0) return ROUTES.submit;
  const value =
    typeof waitMs === 'number'
      ? String(Math.min(waitMs, MAX_TOOL_WAIT_MS))
      : JSON.stringify(waitMs);
  return `${ROUTES.submit}?wait_ms=${encodeURIComponent(value)}`;
}

/** The tools every router offers, whatever agents are live. */
export const STATIC_TOOLS: readonly ReachTool[] = [
  {
    name: 'submit_task',
    description:
      'Submits a task to a capability; with wait_ms, waits that long for its result (the reply carries it once the task is final). Returns the task (task_id, status, result or error).',
    inputSchema: {
      type: 'object',
      properties: {
        capability: { type: 'string', description: 'Capability name (see list_agents)' },
        payload: { description: "The task's payload (any JSON)" },
        wait_ms: {
          type: 'integer',
          minimum: 0,
          maximum: MAX_TOOL_WAIT_MS,
          description: `Wait up to this long for the result (0: answer at once); at most ${MAX_TOOL_WAIT_MS}`,
        },
        task_id: {
          type: 'string',
          description:
            'Your own task_id: submitting it again returns that task, never a second run',
        },
      },
      required: ['capability'],
    },
    run: (args, api) =>
      api.post(submitPath(args.wait_ms), {
        capability: args.capability,
        payload: args.payload ?? null,
        ...(args.task_id === undefined ? {} : { task_id: args.task_id }),
      }),
  },
  {
    name: 'get_task',
    description: "A task's status, result or error, and its timeline",
    inputSchema: { type: 'object', properties: { task_id: TASK_ID }, required: ['task_id'] },
    run: async (args, api) => api.get(ROUTES.task(taskId(args))),
  },
  {
    name: 'cancel_task',
    description:
      'Cancels a task (and its children): final at once, its agent told to stop. A finished task answers ALREADY_FINAL.',
    inputSchema: { type: 'object', properties: { task_id: TASK_ID }, required: ['task_id'] },
    run: async (args, api) => api.post(`${ROUTES.task(taskId(args))}/cancel`),
  },
  {
    name: 'list_agents',
    description:
      'The agents registered: status, load, heartbeat age, capabilities; with capability, only those serving it',
    inputSchema: {
      type: 'object',
      properties: { capability: { type: 'string', description: 'Only agents serving this' } },
    },
    run: async (args, api) => {
      const reply = await api.get(AGENTS_PATH);
      if (reply.status !== 200 || typeof args.capability !== 'string') return reply;
      const { agents } = reply.body as { agents: AgentView[] };
      const capability = args.capability;
      return {
        ...reply,
        body: { agents: agents.filter((a) => a.capabilities.includes(capability)) },
      };
    },
  },
];

/** Where the tools read the agents: the console's listing, which shows each key its tenant's. */
export const AGENTS_PATH = '/v1/console/agents?limit=1000';

/** The tool name of a capability: `run_<capability>` in MCP's tool-name alphabet (`[A-Za-z0-9_.-]`, ≤ 128). */
export function capabilityToolName(capability: string): string {
  return `run_${capability.replace(/[^A-Za-z0-9_.-]/g, '_')}`.slice(0, 128);
}

/** The tool that runs a task on one capability: its arguments are the payload. */
export function capabilityTool(live: LiveCapability): ReachTool {
  const { capability } = live;
  return {
    name: capabilityToolName(capability),
    description: `Runs a task on capability ${capability} (${live.agents} live agent${live.agents === 1 ? '' : 's'}) with the arguments as its payload, and waits up to ${CAPABILITY_TOOL_WAIT_MS / 1000} s for the result; a task not final by then is returned with its task_id (get_task follows it).`,
    inputSchema: {
      ...(live.inputSchema ?? { additionalProperties: true }),
      type: 'object',
    },
    run: (args, api) =>
      api.post(submitPath(CAPABILITY_TOOL_WAIT_MS), { capability, payload: args }),
  };
}

/** A tool's answer from an API reply: the JSON as text and as structured content; a 4xx/5xx is an error result. */
export function toolResult(reply: ApiReply): CallToolResult {
  const body = reply.body;
  const structured =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? { structuredContent: body as Record<string, unknown> }
      : {};
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    ...structured,
    ...(reply.status >= 400 ? { isError: true } : {}),
  };
}
