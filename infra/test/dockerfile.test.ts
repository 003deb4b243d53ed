/**
 * infra/docker/Dockerfile, read by dockerfile-ast (no container engine runs here): a build stage
 * and a runtime stage on node:20-slim, a non-root user, a health check, the services' ports, and
 * an entry point that runs the built JavaScript with the command choosing the service.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import {
  API_ROLES,
  authOf,
  builtEntry,
  DIST_CONDITION,
  portOf,
  relayOptionsOf,
  ROLES,
  ROOT,
} from './services.ts';

const text = readFileSync(join(ROOT, 'infra/docker/Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(text);
const instructions = dockerfile.getInstructions();

/** The instructions of each stage, in order. */
const stages: Instruction[][] = [];
for (const i of instructions) {
  if (i.getKeyword() === 'FROM') stages.push([]);
  stages.at(-1)?.push(i);
}
const runtime = stages.at(-1)!;
const inRuntime = (keyword: string) => runtime.filter((i) => i.getKeyword() === keyword);
/** The exec-form (JSON) arguments of an instruction. */
const json = (i: Instruction | undefined) =>
  JSON.parse(i?.getArgumentsContent() ?? 'null') as string[];

describe('infra/docker/Dockerfile', () => {
  it('builds in one stage and runs in another, both on node:20-slim', () => {
    const froms = dockerfile.getFROMs();
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms)
      expect(`${from.getImageName()}:${from.getImageTag()}`).toBe('node:20-slim');
    expect(froms[0]!.getBuildStage()).toBe('build');
    const copies = inRuntime('COPY').map((i) => i.getTextContent());
    expect(copies.some((c) => /--from=build\s/.test(c))).toBe(true);
  });

  it('runs as a user other than root', () => {
    const users = inRuntime('USER').map((i) => i.getArgumentsContent()?.split(':')[0]);
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0']).not.toContain(users.at(-1));
  });

  it('checks its health with a script the image holds', () => {
    const [check] = inRuntime('HEALTHCHECK');
    const args = check?.getArgumentsContent() ?? '';
    const command = JSON.parse(args.slice(args.indexOf('CMD') + 3).trim()) as string[];
    expect(command[0]).toBe('node');
    expect(existsSync(join(ROOT, command[1]!)), command[1]).toBe(true);
    // The script tries each service's default port.
    const script = readFileSync(join(ROOT, command[1]!), 'utf8');
    for (const role of ROLES) expect(script).toContain(`'${portOf(role)}'`);
  });

  it('listens on every address, the router and registry-sync with API keys required', () => {
    const env = Object.fromEntries(
      inRuntime('ENV').flatMap((i) =>
        (i.getArgumentsContent() ?? '').split(/\s+/).map((kv) => kv.split('=') as [string, string]),
      ),
    );
    expect(env).toMatchObject({ HOST: '0.0.0.0', REACH_AUTH: 'required' });
    for (const role of API_ROLES) {
      expect(() => authOf(role, env)).toThrow(/REACH_ADMIN_KEY must be set/);
      expect(authOf(role, { ...env, REACH_ADMIN_KEY: 'f'.repeat(64) })).toEqual({ required: true });
    }
    // A relay checks no keys (it has no callers): it starts with the image's settings alone.
    expect(relayOptionsOf(env).host).toBe('0.0.0.0');
  });

  it('exposes every service’s port', () => {
    const exposed = inRuntime('EXPOSE').flatMap((i) => i.getArguments().map((a) => a.getValue()));
    expect(exposed.map(Number).sort()).toEqual(ROLES.map((r) => portOf(r)).sort());
  });

  it('runs the built router by default; a command naming another service’s entry runs that', () => {
    const entrypoint = json(inRuntime('ENTRYPOINT').at(-1));
    expect(entrypoint).toEqual(['node', `--conditions=${DIST_CONDITION}`]);
    expect(json(inRuntime('CMD').at(-1))).toEqual([builtEntry('router')]);
    // The header comment shows how to run each of the others, and on which port.
    const header = text.slice(0, text.search(/^FROM /m));
    expect(header).toContain(`the router (port ${portOf('router')})`);
    for (const role of ROLES.filter((r) => r !== 'router')) {
      const entry = builtEntry(role).replace(/\./g, '\\.');
      expect(header).toMatch(new RegExp(`agent-reach ${entry} +\\S.* \\(port ${portOf(role)}`));
    }
    // Every entry is what the build stage builds, with its production dependencies.
    const build = stages[0]!.map((i) => i.getArgumentsContent() ?? '').join('\n');
    for (const role of ROLES) {
      expect(build).toContain(`--filter=@agent-reach/${role}`);
      expect(build).toContain(`--workspace=@agent-reach/${role}`);
    }
  });

  it('keeps node_modules, builds and local state out of the build context', () => {
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['**/node_modules', '**/dist', '.reach', '.git']) {
      expect(ignore).toContain(entry);
    }
  });
});
