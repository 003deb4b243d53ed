/**
 * The published packages as a user gets them: `npm pack` of the built `@agent-reach/worker-sdk`
 * and `@agent-reach/cli`, installed from the tarballs into a fresh project outside the
 * repository (no workspace, no tsx, no TypeScript sources), then plain JavaScript — an ES module
 * and a CommonJS script — runs an agent and a caller against a running stack, the `reach`
 * command lists the agents, and TypeScript finds the declarations through both `import` and
 * `require`. The tarballs' own dependencies come from npm's cache (or the registry).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../support/stack.ts';

const exec = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

let stack: Stack;
let project: string;

/** Runs a command, failing with its output; resolves with stdout. */
async function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout } = await exec(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      timeout: 180_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (err: unknown) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout}\n${e.stderr}`, {
      cause: err,
    });
  }
}

/** `npm pack <dir>` into the project; the tarball's path. */
async function pack(dir: string): Promise<string> {
  const out = await sh('npm', ['pack', dir, '--json', '--pack-destination', project], project);
  const [info] = JSON.parse(out) as Array<{ filename: string }>;
  return join(project, info!.filename);
}

// One agent and one caller, the same program in both module systems.
const program = (mod: 'esm' | 'cjs') => `
const { REGISTRY_URL, ROUTER_URL, REDIS_URL, CAPABILITY } = process.env;
const agent = new ReachAgent({
  registryUrl: REGISTRY_URL,
  redisUrl: REDIS_URL,
  agentId: CAPABILITY + '-agent',
  capabilities: [CAPABILITY],
  maxConcurrency: 2,
  logger: pino({ level: 'warn' }),
  handler: async (task) => ({ echoed: task.payload, module: '${mod}' }),
});
agent.start();
await agent.ready();
const client = new ReachClient({ routerUrl: ROUTER_URL });
const result = await client.run(CAPABILITY, { n: 42 }, { timeoutMs: 20000 });
await client.close();
await agent.close();
process.stdout.write(JSON.stringify({ result, guard: isReachError(new Error('x')) }) + '\\n');
`;

const ESM = `import { ReachAgent, ReachClient, isReachError } from '@agent-reach/worker-sdk';
import { pino } from 'pino';
${program('esm')}`;

const CJS = `'use strict';
const { ReachAgent, ReachClient, isReachError } = require('@agent-reach/worker-sdk');
const { pino } = require('pino');
(async () => {
${program('cjs')}
})().catch((err) => {
  console.error(err);
  process.exit(1);
});`;

// The declarations as both kinds of TypeScript consumer see them.
const TYPES = `import { ReachAgent, ReachClient, type ReachAgentOptions, type TaskView } from '@agent-reach/worker-sdk';
import { runCli, EXIT } from '@agent-reach/cli';
const options: ReachAgentOptions = {
  registryUrl: 'http://127.0.0.1:8080',
  redisUrl: 'redis://127.0.0.1:6379',
  agentId: 'a',
  capabilities: ['c'],
  maxConcurrency: 1,
  handler: async () => 1,
};
export const agent: ReachAgent = new ReachAgent(options);
export const view: Promise<TaskView> = new ReachClient().getTask('t');
export const code: number = EXIT.ok;
export const cli: typeof runCli = runCli;
`;

beforeAll(async () => {
  // Up to date through turbo's cache: a no-op when the sources did not change since `npm run build`.
  await sh(
    'npx',
    [
      'turbo',
      'run',
      'build',
      '--filter=@agent-reach/worker-sdk',
      '--filter=@agent-reach/cli',
      '--output-logs=errors-only',
    ],
    repoRoot,
  );
  project = await mkdtemp(join(tmpdir(), 'agent-reach-packed-'));
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'packed-sdk-check', version: '1.0.0', private: true }),
  );
  const sdk = await pack(join(repoRoot, 'apps/worker-sdk/dist'));
  const cli = await pack(join(repoRoot, 'apps/cli/dist'));
  await sh(
    'npm',
    [
      'install',
      sdk,
      cli,
      'pino',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
    ],
    project,
  );
  await writeFile(join(project, 'main.mjs'), ESM);
  await writeFile(join(project, 'main.cjs'), CJS);
  await writeFile(join(project, 'types.mts'), TYPES);
  await writeFile(join(project, 'types.cts'), TYPES);
  stack = await startStack();
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packed worker-sdk and cli in a plain JavaScript project', () => {
  it('hold built JavaScript and declarations only, with no workspace package left to install', async () => {
    const sdk = JSON.parse(await sh('npm', ['ls', '--all', '--json'], project)) as {
      dependencies: Record<string, { dependencies?: Record<string, unknown> }>;
    };
    expect(Object.keys(sdk.dependencies).sort()).toEqual([
      '@agent-reach/cli',
      '@agent-reach/worker-sdk',
      'pino',
    ]);
    const nested = JSON.stringify(sdk);
    expect(nested).not.toContain('@agent-reach/protocol');
    expect(nested).not.toContain('tsx');
  });

  for (const [mod, file] of [
    ['esm', 'main.mjs'],
    ['cjs', 'main.cjs'],
  ] as const) {
    it(`${mod}: an agent and a caller complete a task through the stack`, async () => {
      const out = await sh(process.execPath, [file], project, {
        REGISTRY_URL: stack.registryUrl,
        ROUTER_URL: stack.routerUrl,
        REDIS_URL: stack.redisUrl,
        CAPABILITY: `packed-${mod}-${suffix}`,
      });
      const last = out.trim().split('\n').at(-1)!;
      expect(JSON.parse(last)).toEqual({
        result: { echoed: { n: 42 }, module: mod },
        guard: false,
      });
    });
  }

  it('the reach command runs from its bin', async () => {
    const out = await sh(
      join(project, 'node_modules/.bin/reach'),
      ['agents', '--json', '--registry', stack.registryUrl],
      project,
    );
    const body = JSON.parse(out) as { agents: unknown[] };
    expect(Array.isArray(body.agents)).toBe(true);
  });

  it('TypeScript resolves the declarations through import (.mts) and require (.cts)', async () => {
    const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');
    await sh(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--typeRoots',
        join(repoRoot, 'node_modules/@types'),
        '--types',
        'node',
        'types.mts',
        'types.cts',
      ],
      project,
    );
  });
});
