import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { msField, pause } from './requests.ts';

/** Most progress notifications one call sends. */
const MAX_STEPS = 100;

/** The demo server's one tool. */
export const WORD_COUNT_TOOL: Tool = {
  name: 'word_count',
  description: 'Counts the words and characters of a text',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The text to count' },
      delay_ms: { type: 'number', description: 'Wait this long first (cancellable)' },
      progress_steps: {
        type: 'integer',
        description:
          'Send this many progress notifications across the wait (when a progress token is given)',
      },
      plain: { type: 'boolean', description: 'Answer text only, without structured content' },
      fail: { type: 'boolean', description: 'Answer a tool error' },
    },
    required: ['text'],
  },
};

/** What one call is told to do. */
interface Args {
  text: string;
  delayMs: number;
  steps: number;
  plain: boolean;
  fail: boolean;
}

function argsOf(request: CallToolRequest): Args {
  const args: Record<string, unknown> = request.params.arguments ?? {};
  if (typeof args.text !== 'string')
    throw new McpError(ErrorCode.InvalidParams, 'word_count needs a string `text`');
  const steps = args.progress_steps;
  return {
    text: args.text,
    delayMs: msField(args, 'delay_ms'),
    steps: Number.isInteger(steps) ? Math.min(Math.max(steps as number, 0), MAX_STEPS) : 0,
    plain: args.plain === true,
    fail: args.fail === true,
  };
}

/** What a call's handler gets besides its request. */
type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Runs `word_count`: waits `delay_ms` (in `progress_steps` steps, each followed by a progress
 * notification when the request has a progress token), then answers the counts as structured
 * content and as JSON text (`plain`: a sentence only; `fail`: a tool error). A cancel stops the
 * wait; `onCancelled` is told the request's id.
 */
async function wordCount(
  request: CallToolRequest,
  extra: Extra,
  onCancelled: (requestId: string) => void,
): Promise<CallToolResult> {
  if (request.params.name !== WORD_COUNT_TOOL.name)
    throw new McpError(ErrorCode.InvalidParams, `no tool ${request.params.name}`);
  const args = argsOf(request);
  const token = request.params._meta?.progressToken;
  const steps = token === undefined ? 0 : args.steps;
  for (let step = 1; step <= Math.max(steps, 1); step += 1) {
    if (!(await pause(args.delayMs / Math.max(steps, 1), extra.signal))) {
      onCancelled(String(extra.requestId));
      return { content: [] };
    }
    if (token !== undefined && step <= steps)
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: step, total: steps, message: `step ${step}` },
      });
  }
  if (args.fail) return { isError: true, content: [{ type: 'text', text: 'asked to fail' }] };
  const counts = {
    words: args.text.split(/\s+/).filter(Boolean).length,
    characters: args.text.length,
  };
  if (args.plain) return { content: [{ type: 'text', text: `${counts.words} words` }] };
  return { content: [{ type: 'text', text: JSON.stringify(counts) }], structuredContent: counts };
}

/**
 * An MCP server with the one tool `word_count`, served by hand with its JSON Schema (as the
 * router's MCP server does) rather than registerTool's zod schemas. `onCancelled` hears of each
 * call a `notifications/cancelled` stopped.
 */
export function wordCountServer(onCancelled: (requestId: string) => void): McpServer {
  const mcp = new McpServer({ name: 'demo-word-count', version: '1.0.0' });
  mcp.server.registerCapabilities({ tools: {} });
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [WORD_COUNT_TOOL] }));
  mcp.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    wordCount(request, extra, onCancelled),
  );
  return mcp;
}
