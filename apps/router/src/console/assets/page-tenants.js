// The console's tenants & keys page, for operators (the API serves both to operators alone):
// tenant records (`GET /v1/tenants`, set with `PUT /v1/tenants/:tenant`) and API keys — make one
// (`POST /v1/keys`, its secret shown this once), list them (`GET /v1/keys`, filtered by tenant
// and role in the URL) and revoke one (`DELETE /v1/keys/:key_id`). Another role is told so.
import {
  button,
  card,
  confirmButton,
  emptyRow,
  filterBar,
  statusLine,
  table,
  timeEl,
} from './admin-table.js';
import { errorText, getJson, h, sendJson } from './dom.js';

/**
 * @typedef {{ tenant: string, weight: number, max_queued: number, max_inflight: number,
 *   max_fairness_weight: number, updated_at: number }} TenantView
 * @typedef {{ key_id: string, tenant: string, role: string, capabilities: string[], label: string,
 *   created_at: number, expires_at: number | null, rate_per_s: number | null, max_inflight: number | null }} KeyView
 */

const ROLES = ['caller', 'operator', 'agent', 'relay'];
/** The record fields an operator sets, as `PUT /v1/tenants/:tenant` names them. */
const TENANT_FIELDS = /** @type {const} */ ([
  ['weight', 'Weight', '1'],
  ['max_queued', 'Max queued', '0 = default'],
  ['max_inflight', 'Max in flight', '0 = no cap'],
  ['max_fairness_weight', 'Max fairness weight', '10'],
]);
const TENANT_COLUMNS = 7;
const KEY_COLUMNS = 9;

/**
 * A labelled input of a form.
 * @param {string} name
 * @param {string} label
 * @param {Record<string, string>} [attrs]
 */
function field(name, label, attrs = {}) {
  const input = h('input', { name, spellcheck: 'false', autocomplete: 'off', ...attrs });
  return { input, el: h('label', {}, [h('span', { class: 'muted' }, [label]), input]) };
}

/** @param {import('./pages.js').PageContext} ctx */
function operatorsOnly(ctx) {
  return card('operators-only', 'Tenants & keys', [
    h('p', { class: 'admin-note' }, [
      'Operators only: tenant records and API keys are managed with an operator key. ',
      `This session is a ${ctx.session.role} key of tenant ${ctx.session.tenant}; `,
      'ask an operator for a new key or a change to your tenant.',
    ]),
  ]);
}

/**
 * @param {HTMLElement} root
 * @param {import('./pages.js').PageContext} ctx
 */
export function mount(root, ctx) {
  if (!ctx.operator) {
    root.replaceChildren(operatorsOnly(ctx));
    return;
  }
  root.replaceChildren(tenantsCard(), keysCard(ctx));
}

// ---- tenant records -------------------------------------------------------------------------

function tenantsCard() {
  const { wrap, body } = table('tenants', [
    'Tenant',
    'Weight',
    'Max queued',
    'Max in flight',
    'Max fairness weight',
    'Changed',
    '',
  ]);
  const status = statusLine('tenant-status');
  const name = field('tenant', 'Tenant', { required: '', placeholder: 'acme', id: 'tenant-name' });
  const inputs = TENANT_FIELDS.map(([key, label, hint]) =>
    field(key, label, {
      type: 'number',
      step: 'any',
      min: '0',
      placeholder: hint,
      id: `tenant-${key}`,
    }),
  );
  const form = h('form', { class: 'admin-form', id: 'tenant-form', autocomplete: 'off' }, [
    name.el,
    ...inputs.map((i) => i.el),
    h('button', { type: 'submit' }, ['Save record']),
  ]);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void save();
  });

  async function save() {
    const tenant = name.input.value.trim();
    /** @type {Record<string, number>} */
    const update = {};
    for (const { input } of inputs)
      if (input.value.trim() !== '') update[input.name] = Number(input.value);
    if (Object.keys(update).length === 0) {
      status.say('Give at least one field to change.', true);
      return;
    }
    const reply = await sendJson('PUT', `/v1/tenants/${encodeURIComponent(tenant)}`, update);
    if (reply.status !== 200) {
      status.say(`${tenant}: ${errorText(reply)}`, true);
      return;
    }
    const view = /** @type {TenantView} */ (reply.body);
    const old = body.querySelector(`tr[data-tenant="${CSS.escape(view.tenant)}"]`);
    if (old) old.replaceWith(row(view));
    else {
      body.querySelector('tr.empty')?.remove();
      body.append(row(view));
    }
    status.say(`${view.tenant}'s record saved.`);
  }

  /** Puts a tenant's record in the form, to change it. @param {TenantView} t */
  function edit(t) {
    name.input.value = t.tenant;
    for (const { input } of inputs)
      input.value = String(t[/** @type {keyof TenantView} */ (input.name)]);
    inputs[0]?.input.focus();
  }

  /** @param {TenantView} t */
  function row(t) {
    return h('tr', { 'data-tenant': t.tenant }, [
      h('td', { class: 'mono' }, [t.tenant]),
      h('td', { class: 'num', 'data-field': 'weight' }, [String(t.weight)]),
      h('td', { class: 'num', 'data-field': 'max_queued' }, [
        t.max_queued ? String(t.max_queued) : 'default',
      ]),
      h('td', { class: 'num', 'data-field': 'max_inflight' }, [
        t.max_inflight ? String(t.max_inflight) : 'no cap',
      ]),
      h('td', { class: 'num', 'data-field': 'max_fairness_weight' }, [
        String(t.max_fairness_weight),
      ]),
      h('td', { class: 'num' }, [timeEl(t.updated_at)]),
      h('td', { class: 'actions' }, [button('edit', 'Edit', () => edit(t))]),
    ]);
  }

  void (async () => {
    const reply = await getJson('/v1/tenants');
    if (reply.status !== 200) {
      body.replaceChildren(emptyRow(TENANT_COLUMNS, errorText(reply), true));
      return;
    }
    const tenants = /** @type {{ tenants: TenantView[] }} */ (reply.body).tenants;
    body.replaceChildren(
      ...(tenants.length
        ? tenants.map(row)
        : [emptyRow(TENANT_COLUMNS, 'No tenant has a record: every tenant has the defaults.')]),
    );
  })();

  return card(
    'tenant-records',
    'Tenant records',
    [form, wrap, status.el],
    'weight and bounds in a capability’s waiting room; a tenant without a record has the defaults',
  );
}

// ---- API keys -------------------------------------------------------------------------------

/** @param {import('./pages.js').PageContext} ctx */
function keysCard(ctx) {
  const { wrap, body } = table('keys', [
    'Key id',
    'Tenant',
    'Role',
    'Label',
    'Capabilities',
    'Created',
    'Expires',
    'Limits',
    '',
  ]);
  const status = statusLine('key-status');
  const note = h('span', {}, ['']);
  const filters = filterBar(
    'key-filters',
    [
      { name: 'tenant', label: 'Tenant', placeholder: 'any' },
      {
        name: 'role',
        label: 'Role',
        options: [['', 'any'], ...ROLES.map((r) => /** @type {[string, string]} */ ([r, r]))],
      },
    ],
    ctx,
    () => void load(),
  );

  const tenant = field('tenant', 'Tenant', { required: '', placeholder: 'acme', id: 'key-tenant' });
  const role = h(
    'select',
    { name: 'role', id: 'key-role' },
    ROLES.map((r) => h('option', { value: r }, [r])),
  );
  const label = field('label', 'Label', {
    placeholder: 'whose key it is',
    id: 'key-label',
    maxlength: '200',
  });
  const caps = field('capabilities', 'Capabilities', {
    placeholder: '* (any), or a,b',
    id: 'key-capabilities',
  });
  const form = h('form', { class: 'admin-form', id: 'key-form', autocomplete: 'off' }, [
    tenant.el,
    h('label', {}, [h('span', { class: 'muted' }, ['Role']), role]),
    label.el,
    caps.el,
    h('button', { type: 'submit' }, ['Create key']),
  ]);
  const shown = h('div', { id: 'new-key-box' });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void create();
  });

  async function create() {
    const capabilities = caps.input.value
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    const reply = await sendJson('POST', '/v1/keys', {
      tenant: tenant.input.value.trim(),
      role: role.value,
      label: label.input.value,
      ...(capabilities.length ? { capabilities } : {}),
    });
    if (reply.status !== 201) {
      status.say(`create: ${errorText(reply)}`, true);
      return;
    }
    const made = /** @type {KeyView & { key: string }} */ (reply.body);
    showKey(made);
    label.input.value = '';
    status.say(`Key ${made.key_id} made for ${made.tenant} (${made.role}).`);
    await load();
  }

  /** The new key, this once. @param {KeyView & { key: string }} made */
  function showKey(made) {
    shown.replaceChildren(
      h('div', { class: 'new-key', id: 'new-key', 'data-key-id': made.key_id }, [
        h('p', {}, [
          h('b', {}, ['New key for ', made.tenant, ` (${made.role}). `]),
          'Copy it now: it will not be shown again, here or by the API.',
        ]),
        h('code', { class: 'mono', id: 'new-key-value' }, [made.key]),
        h('p', { class: 'muted' }, ['Send it as Authorization: Bearer <key>.']),
        button('dismiss-key', 'I have copied it', () => shown.replaceChildren()),
      ]),
    );
  }

  /** @param {HTMLTableRowElement} tr */
  async function revoke(tr) {
    const id = tr.dataset.keyId ?? '';
    const reply = await sendJson('DELETE', `/v1/keys/${encodeURIComponent(id)}`);
    if (reply.status !== 204) {
      status.say(`revoke ${id}: ${errorText(reply)}`, true);
      return;
    }
    tr.remove();
    if (shown.querySelector(`[data-key-id="${CSS.escape(id)}"]`)) shown.replaceChildren();
    status.say(`Key ${id} revoked: every router refuses it within a second.`);
    await load();
  }

  /** @param {KeyView} k */
  function row(k) {
    const own = k.key_id === ctx.session.key_id;
    const limits = [
      k.rate_per_s === null ? '' : `${k.rate_per_s || '∞'}/s`,
      k.max_inflight === null ? '' : `${k.max_inflight || '∞'} in flight`,
    ].filter(Boolean);
    /** @type {HTMLTableRowElement} */
    const tr = h('tr', { 'data-key-id': k.key_id, 'data-tenant': k.tenant, 'data-role': k.role }, [
      h('td', { class: 'mono' }, [
        k.key_id,
        own ? h('span', { class: 'muted' }, [' (this session)']) : undefined,
      ]),
      h('td', { class: 'mono' }, [k.tenant]),
      h('td', {}, [h('span', { class: 'pill' }, [k.role])]),
      h('td', {}, [k.label || h('span', { class: 'muted' }, ['–'])]),
      h(
        'td',
        {},
        k.capabilities.map((c) => h('span', { class: 'chip' }, [c])),
      ),
      h('td', { class: 'num' }, [timeEl(k.created_at)]),
      h('td', { class: 'num' }, [k.expires_at === null ? 'never' : timeEl(k.expires_at)]),
      h('td', { class: 'num' }, [limits.join(' · ') || 'defaults']),
      h('td', { class: 'actions' }, [
        confirmButton(
          'revoke',
          'Revoke',
          own ? 'Revoke the key of this session? It logs you out.' : `Revoke ${k.key_id}?`,
          () => revoke(tr),
        ),
      ]),
    ]);
    return tr;
  }

  async function load() {
    const reply = await getJson('/v1/keys');
    if (reply.status !== 200) {
      body.replaceChildren(emptyRow(KEY_COLUMNS, errorText(reply), true));
      return;
    }
    const items = /** @type {{ items: KeyView[] }} */ (reply.body).items;
    const t = ctx.query.get('tenant') ?? '';
    const r = ctx.query.get('role') ?? '';
    const match = items
      .filter((k) => (!t || k.tenant === t) && (!r || k.role === r))
      .sort((a, b) => b.created_at - a.created_at);
    body.replaceChildren(
      ...(match.length ? match.map(row) : [emptyRow(KEY_COLUMNS, 'No keys match.')]),
    );
    note.textContent = `${match.length} of ${items.length} keys · secrets are never listed`;
  }

  void load();
  return card('api-keys', 'API keys', [form, shown, status.el, filters, wrap], note);
}
