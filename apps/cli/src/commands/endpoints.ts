import { ENDPOINT_ADD_OPTIONS } from '../args.ts';
import {
  ENDPOINT_PROTOCOLS,
  ROUTES,
  type EndpointBody,
  type EndpointProtocol,
  type EndpointView,
} from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table } from '../format.ts';

const USAGE_ADD =
  'usage: reach endpoints add <agent_id> --protocol a2a|http|mcp --url <url> [--capability <name> ...] [--capabilities a,b] [--capability-prefix <p>] [--max-concurrency <n>] [--region <r>] [--tag <t> ...] [--shared] [--health-url <url>] [--timeout-ms <ms>] [--header Name=Value ...] [--bearer-secret <secret>]';

/** A whole number option within bounds, or undefined when not given. */
function intOf(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value) || Number(value) < min)
    throw new UsageError(`--${name} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** `--header Name=Value`, each once. */
function headersOf(values: readonly string[]): Record<string, string> | undefined {
  if (values.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const text of values) {
    const at = text.indexOf('=');
    // The value is a secret: never echoed back in the error.
    if (at <= 0) throw new UsageError('--header takes Name=Value (e.g. --header X-Api-Key=…)');
    headers[text.slice(0, at).trim()] = text.slice(at + 1);
  }
  return headers;
}

/** The declaration `reach endpoints add` sends. */
function bodyOf(ctx: Context): EndpointBody {
  const o = ctx.options;
  if (o.protocol === undefined || o.url === undefined) throw new UsageError(USAGE_ADD);
  if (!(ENDPOINT_PROTOCOLS as readonly string[]).includes(o.protocol))
    throw new UsageError(
      `--protocol must be one of ${ENDPOINT_PROTOCOLS.join(', ')}, got ${JSON.stringify(o.protocol)}`,
    );
  const capabilities = [
    ...(ctx.repeated['capability'] ?? []),
    ...(o.capabilities ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean),
  ];
  const tags = ctx.repeated['tag'] ?? [];
  const headers = headersOf(ctx.repeated['header'] ?? []);
  const maxConcurrency = intOf('max-concurrency', o['max-concurrency'], 1);
  const timeoutMs = intOf('timeout-ms', o['timeout-ms'], 1);
  return {
    protocol: o.protocol as EndpointProtocol,
    url: o.url,
    ...(capabilities.length > 0 ? { capabilities: [...new Set(capabilities)] } : {}),
    ...(o['capability-prefix'] !== undefined ? { capability_prefix: o['capability-prefix'] } : {}),
    ...(maxConcurrency !== undefined ? { max_concurrency: maxConcurrency } : {}),
    ...(o.region !== undefined ? { region: o.region } : {}),
    ...(tags.length > 0 ? { tags: [...new Set(tags)] } : {}),
    ...(o.shared === true ? { shared: true } : {}),
    ...(o['health-url'] !== undefined ? { health_url: o['health-url'] } : {}),
    ...(timeoutMs !== undefined ? { timeout_ms: timeoutMs } : {}),
    ...(headers !== undefined ? { headers } : {}),
    ...(o['bearer-secret'] !== undefined ? { bearer_secret: o['bearer-secret'] } : {}),
  };
}

/** One line about a declaration: what a relay calls and what it serves. */
function summary(e: EndpointView): string {
  const caps =
    e.capabilities?.join(',') ??
    `discovered${e.capability_prefix ? ` (prefix ${e.capability_prefix})` : ''}`;
  const secrets = [
    ...e.header_names.map((h) => `header ${h}`),
    ...(e.has_bearer_secret ? ['bearer secret'] : []),
  ];
  return `endpoint ${e.agent_id}: ${e.protocol} ${e.url}, capabilities ${caps}, max_concurrency ${e.max_concurrency}, tenant ${e.tenant}${e.shared ? ' (shared)' : ''}${secrets.length > 0 ? `; stored: ${secrets.join(', ')}` : ''}`;
}

function refuseAddOptions(ctx: Context, sub: string): void {
  const given = ENDPOINT_ADD_OPTIONS.filter((k) => ctx.options[k] !== undefined);
  if (given.length > 0)
    throw new UsageError(`reach endpoints ${sub} takes no --${given.join(', --')}`);
}

async function add(ctx: Context): Promise<number> {
  const [, agentId, ...rest] = ctx.args;
  if (agentId === undefined || rest.length > 0) throw new UsageError(USAGE_ADD);
  const reply = await ctx.registry.request<EndpointView>(ROUTES.endpoint(agentId), {
    method: 'PUT',
    body: bodyOf(ctx),
  });
  if (ctx.json) printJson(ctx, reply);
  else
    printLines(
      ctx,
      summary(reply),
      'a relay registers it and serves its tasks (docs/ENDPOINTS.md)',
    );
  return 0;
}

async function list(ctx: Context): Promise<number> {
  refuseAddOptions(ctx, 'list');
  if (ctx.args.length > 1) throw new UsageError('usage: reach endpoints list');
  const reply = await ctx.registry.request<{ endpoints: EndpointView[] }>(ROUTES.endpoints);
  if (ctx.json) {
    printJson(ctx, reply);
    return 0;
  }
  if (reply.endpoints.length === 0) {
    printLines(ctx, 'no endpoint agents declared; declare one with reach endpoints add');
    return 0;
  }
  const rows = reply.endpoints.map((e) => [
    e.agent_id,
    e.protocol,
    e.url,
    e.capabilities?.join(',') ??
      `(discovered${e.capability_prefix ? `, ${e.capability_prefix}*` : ''})`,
    String(e.max_concurrency),
    e.shared ? `${e.tenant} (shared)` : e.tenant,
    e.source,
  ]);
  printLines(
    ctx,
    table(['AGENT', 'PROTOCOL', 'URL', 'CAPABILITIES', 'MAX', 'TENANT', 'SOURCE'], rows),
    '',
    `${rows.length} endpoint agent${rows.length === 1 ? '' : 's'}; their live state: reach agents`,
  );
  return 0;
}

async function remove(ctx: Context): Promise<number> {
  refuseAddOptions(ctx, 'remove');
  const [, agentId, ...rest] = ctx.args;
  if (agentId === undefined || rest.length > 0)
    throw new UsageError('usage: reach endpoints remove <agent_id>');
  await ctx.registry.request<undefined>(ROUTES.endpoint(agentId), { method: 'DELETE' });
  if (ctx.json) printJson(ctx, { agent_id: agentId, removed: true });
  else printLines(ctx, `removed ${agentId}: its relay stops serving it`);
  return 0;
}

/** `reach endpoints add|list|remove`: endpoint agents, declared on registry-sync. */
export async function endpointsCommand(ctx: Context): Promise<number> {
  switch (ctx.args[0]) {
    case 'add':
      return add(ctx);
    case 'list':
      return list(ctx);
    case 'remove':
      return remove(ctx);
    default:
      throw new UsageError('usage: reach endpoints add|list|remove (see reach --help)');
  }
}
