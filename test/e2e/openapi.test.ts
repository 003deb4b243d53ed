/**
 * Both services publish an OpenAPI 3 document at /docs/json covering their endpoints, and a UI
 * at /docs whose files are served locally (no CDN).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../support/stack.ts';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ influx: 'v1' });
});

afterAll(async () => {
  await stack?.stop();
});

interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  components?: Record<string, Record<string, unknown>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Every `$ref` in the document points at something in it. */
function unresolvedRefs(doc: OpenApiDoc): string[] {
  const refs: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') refs.push(v);
        else walk(v);
      }
    }
  };
  walk(doc);
  return refs.filter((ref) => {
    if (!ref.startsWith('#/')) return true;
    let at: unknown = doc;
    for (const part of ref.slice(2).split('/'))
      at = (at as Record<string, unknown> | undefined)?.[
        part.replace(/~1/g, '/').replace(/~0/g, '~')
      ];
    return at === undefined;
  });
}

async function checkDocs(base: string, expected: Record<string, string[]>): Promise<void> {
  const res = await fetch(`${base}/docs/json`);
  expect(res.status).toBe(200);
  const doc = (await res.json()) as OpenApiDoc;
  expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
  expect(doc.info.title).toBeTruthy();
  expect(doc.info.version).toBeTruthy();
  for (const [path, methods] of Object.entries(expected)) {
    expect(doc.paths, `path ${path}`).toHaveProperty([path]);
    for (const m of methods)
      expect(doc.paths[path], `${m.toUpperCase()} ${path}`).toHaveProperty([m]);
  }
  for (const [path, item] of Object.entries(doc.paths)) {
    expect(path.startsWith('/'), path).toBe(true);
    expect(path).not.toMatch(/:\w/); // OpenAPI templates are {param}
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      expect(
        Object.keys(op.responses ?? {}).length,
        `${method} ${path} has responses`,
      ).toBeGreaterThan(0);
    }
  }
  expect(unresolvedRefs(doc)).toEqual([]);

  const ui = await fetch(`${base}/docs`);
  expect(ui.status).toBe(200);
  expect(ui.headers.get('content-type')).toContain('text/html');
  const html = await ui.text();
  expect(html).toMatch(/swagger/i);
  // Everything the page loads comes from this server.
  expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  const css = await fetch(`${base}/docs/static/swagger-ui.css`);
  expect(css.status).toBe(200);
  // Read to the end: an unread body keeps its connection busy and the server from closing.
  expect((await css.text()).length).toBeGreaterThan(1000);
}

describe('OpenAPI', () => {
  it('router: /docs/json lists every endpoint and /docs serves the UI', async () => {
    await checkDocs(stack.routerUrl, {
      '/healthz': ['get'],
      '/livez': ['get'],
      '/metrics': ['get'],
      '/v1/tasks': ['post', 'get'],
      '/v1/tasks/{task_id}': ['get'],
      '/v1/callbacks/{topic}': ['get'],
      '/console': ['get'],
      '/console/assets/{file}': ['get'],
      '/v1/console/agents': ['get'],
      '/v1/console/events': ['get'],
      '/v1/console/latency': ['get'],
      '/v1/webhooks/failures': ['get'],
      '/v1/webhooks/failures/{id}/resend': ['post'],
      '/v1/tenants/{tenant}/webhook-secret': ['post'],
    });
  });

  it('registry-sync: /docs/json lists every endpoint and /docs serves the UI', async () => {
    await checkDocs(stack.registryUrl, {
      '/healthz': ['get'],
      '/livez': ['get'],
      '/metrics': ['get'],
      '/v1/agents/register': ['post'],
      '/v1/agents/{agent_id}/heartbeat': ['post'],
      '/v1/agents/{agent_id}/deregister': ['post'],
      '/v1/agents': ['get'],
      '/v1/agents/{agent_id}': ['get'],
    });
  });
});
