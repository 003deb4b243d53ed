// The keys `npm start` makes for its demo processes when keys are required (REACH_AUTH=required).

/**
 * A key for the demo agents (role `agent`) or the relays (role `relay`), made with the admin key
 * (`POST /v1/keys`) and passed to them as REACH_KEY or REACH_RELAY_KEY: never printed.
 */
export async function demoKey(
  routerPort: number,
  adminAuth: Record<string, string>,
  key: { role: 'agent' | 'relay'; capabilities?: string[]; label: string },
): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${routerPort}/v1/keys`, {
    method: 'POST',
    headers: { ...adminAuth, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'default', ...key }),
  });
  const body = (await res.json().catch(() => ({}))) as { key?: string; message?: string };
  if (res.status !== 201 || typeof body.key !== 'string')
    throw new Error(
      `making a ${key.role} key (${key.label}) failed: ${res.status} ${body.message ?? ''}`,
    );
  return body.key;
}
