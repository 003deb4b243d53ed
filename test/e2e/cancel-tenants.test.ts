/**
 * Cancellation with keys required: a tenant cancels its own task; another tenant's task is
 * unknown to it (404, not 403) and stays as it was; an operator names it `<tenant>/<task_id>`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = 'e2e-admin-key-of-the-cancel-test-0123456789';
let stack: Stack;
const key: Record<string, string> = {};

const as = (who: string) => ({ authorization: `Bearer ${key[who] ?? ADMIN}` });
const queued = async (who: string): Promise<string> => {
  const res = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
    body: { capability: 'unserved', payload: 1, on_no_agent: 'queue' },
    headers: as(who),
  });
  expect(res.status).toBe(202);
  return res.body.task_id;
};
const cancel = (who: string, id: string) =>
  http<{ task_id?: string; status?: string; error?: string }>(
    `${stack.routerUrl}/v1/tasks/${encodeURIComponent(id)}/cancel`,
    { method: 'POST', body: {}, headers: as(who) },
  );
const statusOf = async (who: string, id: string) =>
  (
    await http<{ status: string }>(`${stack.routerUrl}/v1/tasks/${encodeURIComponent(id)}`, {
      headers: as(who),
    })
  ).body.status;

beforeAll(async () => {
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN },
  });
  for (const tenant of ['acme', 'globex']) {
    const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
      body: { tenant, role: 'caller', label: `${tenant} app` },
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(res.status).toBe(201);
    key[tenant] = res.body.key;
  }
});

afterAll(async () => {
  await stack?.stop();
});

describe('cancelling across tenants', () => {
  it('404 for another tenant’s task, which stays as it was; 202 for its own; an operator names it <tenant>/<id>', async () => {
    const id = await queued('acme');
    expect((await cancel('globex', id)).status).toBe(404);
    expect((await cancel('globex', `acme/${id}`)).status).toBe(404);
    expect(await statusOf('acme', id)).not.toBe('cancelled');
    const own = await cancel('acme', id);
    expect(own.status).toBe(202);
    expect(own.body).toEqual({ task_id: id, status: 'cancelled' });
    expect(await statusOf('acme', id)).toBe('cancelled');

    const other = await queued('acme');
    const byOperator = await cancel('admin', `acme/${other}`);
    expect(byOperator.status).toBe(202);
    expect(byOperator.body.task_id).toBe(`acme/${other}`);
    const noKey = await http(`${stack.routerUrl}/v1/tasks/${other}/cancel`, {
      method: 'POST',
      body: {},
    });
    expect(noKey.status).toBe(401);
  });
});
