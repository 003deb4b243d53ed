import type { AgentView } from '@agent-reach/protocol';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { InputSchemaReader } from './input-schemas.ts';
import type { ReachApi } from './reach-api.ts';
import {
  AGENTS_PATH,
  capabilityTool,
  STATIC_TOOLS,
  toolResult,
  type LiveCapability,
  type ReachTool,
} from './tools.ts';

/** What the MCP server is built from: the HTTP API as the client's key sees it, and the registered input schemas. */
export interface McpServerDeps {
  api: ReachApi;
  schemas: InputSchemaReader;
  /** Reported as the server's version in `initialize`. */
  version: string;
}

/** The URI template of a task's timeline resource. */
export const TIMELINE_URI = 'reach://tasks/{task_id}/timeline';

/** Agents read per capability when looking for its input schema. */
const SCHEMA_AGENTS_PER_CAPABILITY = 4;

/** The capabilities of the agents the key sees that are not OFFLINE, each with its input schema. */
async function liveCapabilities(deps: McpServerDeps): Promise<LiveCapability[]> {
  const reply = await deps.api.get(AGENTS_PATH);
  if (reply.status !== 200) return [];
  const byCapability = new Map<string, string[]>();
  for (const agent of (reply.body as { agents: AgentView[] }).agents) {
    if (agent.status === 'OFFLINE') continue;
    for (const c of agent.capabilities)
      byCapability.set(c, [...(byCapability.get(c) ?? []), agent.agent_id]);
  }
  const readFrom = new Set<string>();
  for (const ids of byCapability.values()) {
    for (const id of ids.sort().slice(0, SCHEMA_AGENTS_PER_CAPABILITY)) readFrom.add(id);
  }
  const schemas = await deps.schemas.read([...readFrom].sort());
  return [...byCapability]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([capability, ids]) => ({
      capability,
      agents: ids.length,
      inputSchema: schemas.get(capability),
    }));
}

/** A URI variable as the task_id it encodes (an operator's `<tenant>/<id>` comes as `%2F`). */
function decoded(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** Every tool: the fixed ones, then one per live capability (the first of two that sanitize alike). */
async function allTools(deps: McpServerDeps): Promise<ReachTool[]> {
  const tools = new Map(STATIC_TOOLS.map((t) => [t.name, t]));
  for (const live of await liveCapabilities(deps)) {
    const tool = capabilityTool(live);
    if (!tools.has(tool.name)) tools.set(tool.name, tool);
  }
  return [...tools.values()];
}

/**
 * The Agent-Reach MCP server: tools `submit_task`, `get_task`, `cancel_task`, `list_agents` and
 * `run_<capability>` per live capability, and the resource template of a task's timeline. Each
 * is a call of the router's HTTP API (docs/MCP.md). One server per request (stateless).
 */
export function buildMcpServer(deps: McpServerDeps): McpServer {
  const mcp = new McpServer({ name: 'agent-reach', version: deps.version });
  // Tools come and go with the fleet, with JSON Schemas agents registered: served by hand
  // rather than registerTool (fixed zod schemas).
  mcp.server.registerCapabilities({ tools: {} });
  mcp.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: (await allTools(deps)).map(({ name, description, inputSchema }) => ({
      name,
      description,
      inputSchema,
    })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args = {} } = request.params;
    const tool =
      STATIC_TOOLS.find((t) => t.name === name) ??
      (await allTools(deps)).find((t) => t.name === name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool ${name}: see tools/list`);
    return toolResult(await tool.run(args, deps.api));
  });
  mcp.registerResource(
    'task-timeline',
    new ResourceTemplate(TIMELINE_URI, { list: undefined }),
    {
      description: "A task's stages with the gap between them (GET /v1/tasks/:task_id/timeline)",
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      const id = decoded(variables.task_id);
      if (id === undefined)
        throw new McpError(ErrorCode.InvalidParams, `no task_id in ${uri.href}`);
      const reply = await deps.api.get(`/v1/tasks/${encodeURIComponent(id)}/timeline`);
      if (reply.status !== 200) {
        const { error, message } = reply.body as { error?: string; message?: string };
        throw new McpError(ErrorCode.InvalidParams, `${error ?? reply.status}: ${message ?? ''}`);
      }
      return {
        contents: [
          { uri: uri.href, mimeType: 'application/json', text: JSON.stringify(reply.body) },
        ],
      };
    },
  );
  return mcp;
}
