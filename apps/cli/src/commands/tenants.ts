import { TENANT_SET_OPTIONS } from '../args.ts';
import {
  ROUTES,
  type TenantsReply,
  type TenantUpdate,
  type TenantView,
} from '@agent-reach/protocol';
import { printJson, printLines, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table, time } from '../format.ts';

const USAGE_SET =
  'usage: reach tenants set <tenant> [--weight <n>] [--max-queued <n>] [--max-inflight <n>] [--max-fairness-weight <n>] (at least one)';

/** A weight option: a number from 0.01 to 1000. */
function weightOf(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!(n >= 0.01 && n <= 1000))
    throw new UsageError(
      `--${name} must be a number from 0.01 to 1000, got ${JSON.stringify(value)}`,
    );
  return n;
}

/** A bound option: a whole number from 0 to 10,000,000. */
function boundOf(name: string, value: string | undefined, zero: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,8}$/.test(value) || Number(value) > 10_000_000)
    throw new UsageError(
      `--${name} must be a whole number from 0 to 10000000 (0: ${zero}), got ${JSON.stringify(value)}`,
    );
  return Number(value);
}

function onlyFor(ctx: Context, sub: string): void {
  const given = TENANT_SET_OPTIONS.filter((k) => ctx.options[k] !== undefined);
  if (given.length > 0)
    throw new UsageError(`reach tenants ${sub} takes no --${given.join(', --')}`);
}

/** `max_queued` 0 is the router's default and `max_inflight` 0 no cap: said so in the table. */
function row(t: TenantView): (string | number)[] {
  return [
    t.tenant,
    t.weight,
    t.max_queued === 0 ? 'default' : t.max_queued,
    t.max_inflight === 0 ? 'no cap' : t.max_inflight,
    t.max_fairness_weight,
    t.updated_at === 0 ? 'never' : time(t.updated_at),
  ];
}

const HEADER = ['TENANT', 'WEIGHT', 'MAX QUEUED', 'MAX INFLIGHT', 'MAX FAIRNESS', 'UPDATED'];

function show(ctx: Context, view: TenantView): number {
  if (ctx.json) printJson(ctx, view);
  else printLines(ctx, table(HEADER, [row(view)]));
  return 0;
}

async function list(ctx: Context): Promise<number> {
  onlyFor(ctx, 'list');
  if (ctx.args.length > 1) throw new UsageError('usage: reach tenants list');
  const reply = await ctx.router.request<TenantsReply>(ROUTES.tenants);
  if (ctx.json) {
    printJson(ctx, reply);
    return 0;
  }
  if (reply.tenants.length === 0) {
    printLines(
      ctx,
      'no tenant records: every tenant has the defaults (reach tenants get <tenant>)',
    );
    return 0;
  }
  const n = reply.tenants.length;
  printLines(
    ctx,
    table(HEADER, reply.tenants.map(row)),
    '',
    `${n} tenant${n === 1 ? '' : 's'} with a record; change one with: reach tenants set <tenant> --weight <n>`,
  );
  return 0;
}

async function get(ctx: Context): Promise<number> {
  onlyFor(ctx, 'get');
  const [, tenant, ...rest] = ctx.args;
  if (tenant === undefined || rest.length > 0)
    throw new UsageError('usage: reach tenants get <tenant>');
  return show(ctx, await ctx.router.request<TenantView>(ROUTES.tenant(tenant)));
}

async function set(ctx: Context): Promise<number> {
  const [, tenant, ...rest] = ctx.args;
  if (tenant === undefined || rest.length > 0) throw new UsageError(USAGE_SET);
  const o = ctx.options;
  const weight = weightOf('weight', o.weight);
  const maxQueued = boundOf('max-queued', o['max-queued'], "the router's default");
  const maxInflight = boundOf('max-inflight', o['max-inflight'], 'no cap');
  const maxFairness = weightOf('max-fairness-weight', o['max-fairness-weight']);
  const body: TenantUpdate = {
    ...(weight === undefined ? {} : { weight }),
    ...(maxQueued === undefined ? {} : { max_queued: maxQueued }),
    ...(maxInflight === undefined ? {} : { max_inflight: maxInflight }),
    ...(maxFairness === undefined ? {} : { max_fairness_weight: maxFairness }),
  };
  if (Object.keys(body).length === 0) throw new UsageError(USAGE_SET);
  const view = await ctx.router.request<TenantView>(ROUTES.tenant(tenant), {
    method: 'PUT',
    body,
  });
  return show(ctx, view);
}

/** `reach tenants list|get|set`: tenant records, on the router (an operator key). */
export async function tenantsCommand(ctx: Context): Promise<number> {
  switch (ctx.args[0]) {
    case 'list':
      return list(ctx);
    case 'get':
      return get(ctx);
    case 'set':
      return set(ctx);
    default:
      throw new UsageError('usage: reach tenants list|get|set (see reach --help)');
  }
}
