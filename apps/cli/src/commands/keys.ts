import {
  ROUTES,
  type CreateKeyBody,
  type CreateKeyReply,
  type KeysReply,
} from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table, time } from '../format.ts';

const ROLES = ['caller', 'operator', 'agent', 'relay'] as const;
const USAGE_CREATE =
  'usage: reach keys create --tenant <t> --role caller|operator|agent|relay [--capabilities a,b] [--label <text>] [--expires-at <time>] [--rate-per-s <n>] [--max-inflight <n>]';

/** `--expires-at`: epoch ms, or an ISO time such as 2027-01-31T00:00:00Z. */
function expiresAtOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(n) || n <= Date.now())
    throw new UsageError(
      `--expires-at must be a future ISO time or epoch ms, got ${JSON.stringify(value)}`,
    );
  return n;
}

/** A quota option (docs/SECURITY.md, Quotas): a whole number ≥ 0, 0 for unlimited. */
function quotaOf(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,8}$/.test(value))
    throw new UsageError(
      `--${name} must be a whole number (0: unlimited), got ${JSON.stringify(value)}`,
    );
  return Number(value);
}

function onlyFor(ctx: Context, sub: string): void {
  const o = ctx.options;
  const given = [
    'tenant',
    'role',
    'capabilities',
    'label',
    'expires-at',
    'rate-per-s',
    'max-inflight',
  ].filter((k) => o[k as keyof typeof o] !== undefined);
  if (given.length > 0) throw new UsageError(`reach keys ${sub} takes no --${given.join(', --')}`);
}

async function create(ctx: Context): Promise<number> {
  const { tenant, role, capabilities, label } = ctx.options;
  if (ctx.args.length > 1 || tenant === undefined || role === undefined)
    throw new UsageError(USAGE_CREATE);
  if (!(ROLES as readonly string[]).includes(role))
    throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got ${JSON.stringify(role)}`);
  const expiresAt = expiresAtOf(ctx.options['expires-at']);
  const ratePerS = quotaOf('rate-per-s', ctx.options['rate-per-s']);
  const maxInflight = quotaOf('max-inflight', ctx.options['max-inflight']);
  const body: CreateKeyBody = {
    tenant,
    role: role as CreateKeyBody['role'],
    ...(capabilities === undefined
      ? {}
      : {
          capabilities: capabilities
            .split(',')
            .map((c) => c.trim())
            .filter(Boolean),
        }),
    ...(label === undefined ? {} : { label }),
    ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
    ...(ratePerS === undefined ? {} : { rate_per_s: ratePerS }),
    ...(maxInflight === undefined ? {} : { max_inflight: maxInflight }),
  };
  const reply = await ctx.router.request<CreateKeyReply>(ROUTES.keys, { body });
  if (ctx.json) {
    printJson(ctx, reply);
    return 0;
  }
  printLines(
    ctx,
    reply.key,
    '',
    `key ${reply.key_id}: tenant ${reply.tenant}, role ${reply.role}, capabilities ${reply.capabilities.join(',')}${reply.expires_at === null ? '' : `, expires ${time(reply.expires_at)}`}`,
    'This is the only time the key is shown: store it now (e.g. REACH_KEY=<key>).',
  );
  return 0;
}

async function list(ctx: Context): Promise<number> {
  onlyFor(ctx, 'list');
  if (ctx.args.length > 1) throw new UsageError('usage: reach keys list');
  const reply = await ctx.router.request<KeysReply>(ROUTES.keys);
  if (ctx.json) {
    printJson(ctx, reply);
    return 0;
  }
  if (reply.items.length === 0) {
    printLines(ctx, 'no API keys (REACH_ADMIN_KEY is not listed)');
    return 0;
  }
  const rows = reply.items.map((k) => [
    k.key_id,
    k.tenant,
    k.role,
    k.capabilities.join(','),
    k.label,
    time(k.created_at),
    k.expires_at === null ? 'never' : time(k.expires_at),
  ]);
  printLines(
    ctx,
    table(['KEY ID', 'TENANT', 'ROLE', 'CAPABILITIES', 'LABEL', 'CREATED', 'EXPIRES'], rows),
    '',
    `${reply.items.length} key${reply.items.length === 1 ? '' : 's'}; revoke one with: reach keys revoke <key_id>`,
  );
  return 0;
}

async function revoke(ctx: Context): Promise<number> {
  onlyFor(ctx, 'revoke');
  const [, keyId, ...rest] = ctx.args;
  if (keyId === undefined || rest.length > 0)
    throw new UsageError('usage: reach keys revoke <key_id>');
  await ctx.router.request<undefined>(ROUTES.key(keyId), { method: 'DELETE' });
  if (ctx.json) printJson(ctx, { key_id: keyId, revoked: true });
  else
    printLines(ctx, `revoked ${keyId}: every router and registry-sync refuses it within a second`);
  return 0;
}

/** `reach keys create|list|revoke`: API keys, on the router (an operator key). */
export async function keysCommand(ctx: Context): Promise<number> {
  switch (ctx.args[0]) {
    case 'create':
      return create(ctx);
    case 'list':
      return list(ctx);
    case 'revoke':
      return revoke(ctx);
    default:
      throw new UsageError('usage: reach keys create|list|revoke (see reach --help)');
  }
}
