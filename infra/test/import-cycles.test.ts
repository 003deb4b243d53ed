/**
 * No import circles in the workspaces' sources (apps/*\/src, packages/*\/src), type-only imports
 * and dynamic imports included. ESLint's `import-x/no-cycle` skips `import type`, and a circle of
 * types still ties the modules' design together (and turns into a runtime circle with the first
 * value import), so the graph is built here by dependency-cruiser from the TypeScript sources
 * before compilation (`tsPreCompilationDeps`), across packages through their `exports`.
 */
import { resolve } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/** The import graph of every source file, workspace imports resolved to their `src`. */
async function sourceGraph(): Promise<ICruiseResult> {
  const { output } = await cruise(['apps/*/src', 'packages/*/src'], {
    baseDir: ROOT,
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    // The workspaces' `exports` send the plain conditions to `src/*.ts` (built code answers to
    // `agent-reach-dist` only), so `@agent-reach/*` imports land in the same graph.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'default'],
      extensions: ['.ts', '.js', '.mjs'],
    },
  });
  if (typeof output === 'string') throw new Error('dependency-cruiser returned text');
  return output;
}

/** Each circle once, as `a → b → … → a`, starting at its smallest module so rotations match. */
function circlesOf(graph: ICruiseResult): string[] {
  const circles = new Set<string>();
  for (const mod of graph.modules) {
    for (const dep of mod.dependencies) {
      if (!dep.circular || dep.cycle === undefined) continue;
      // `cycle` is the path from the dependency back to `mod`, which it ends with.
      const path = dep.cycle.map((c) => c.name);
      const start = path.indexOf(path.reduce((a, b) => (b < a ? b : a)));
      const rotated = [...path.slice(start), ...path.slice(0, start)];
      circles.add([...rotated, rotated[0]].join(' → '));
    }
  }
  return [...circles].sort();
}

describe('import circles', () => {
  it('there are none in apps/*/src and packages/*/src, type-only imports included', async () => {
    const graph = await sourceGraph();
    // A workspace import the resolver missed would hide every circle through it.
    const unresolved = graph.modules
      .filter((m) => m.couldNotResolve && /^(\.|@agent-reach\/)/.test(m.source))
      .map((m) => `${m.source} (imported by ${m.dependents.join(', ')})`);
    expect(unresolved, 'imports dependency-cruiser could not resolve').toEqual([]);
    expect(graph.modules.some((m) => m.source.startsWith('packages/protocol/src/'))).toBe(true);

    expect(circlesOf(graph), 'import circles (break each where the shared part belongs)').toEqual(
      [],
    );
  }, 60_000);
});
