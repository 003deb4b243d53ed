/**
 * Each demo server runs as its own process (`main.ts`), prints its URL as a JSON line, answers,
 * and dies with SIGKILL like any endpoint a test wants gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));
let child: ChildProcess | undefined;

afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

/** Starts `main.ts --kind <kind>` and resolves with the URL of its first stdout line. */
async function start(kind: string): Promise<string> {
  child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--kind', kind, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) return (JSON.parse(line) as { url: string }).url;
  throw new Error(`demo ${kind} ended before printing its URL`);
}

describe('demo main', () => {
  it('runs the HTTP endpoint', async () => {
    const url = await start('http');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('runs the A2A server', async () => {
    const url = await start('a2a');
    const card = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as {
      skills: { id: string }[];
    };
    expect(card.skills.map((s) => s.id)).toEqual(['summarize']);
  });

  it('runs the MCP server, and dies on SIGKILL', async () => {
    const url = await start('mcp');
    expect(url).toMatch(/\/mcp$/);
    const res = await fetch(url, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    const exited = new Promise((resolve) =>
      child!.once('exit', (_code, signal) => resolve(signal)),
    );
    child!.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    await expect(fetch(url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
