import { onFreePort } from '@agent-reach/testkit';
import type { Child, ChildSet, SpawnNodeOptions } from '../proc/children.ts';

/**
 * Spawns a child that listens on the port it finds in `env[portVar]`, and resolves once
 * `listening` says it does; started again on another port when its own was taken.
 */
export async function spawnListening(
  children: ChildSet,
  opts: SpawnNodeOptions,
  portVar: string,
  listening: (child: Child, port: number) => Promise<unknown>,
): Promise<{ port: number; child: Child }> {
  const { port, started } = await onFreePort(`[bench] ${opts.name}`, async (p) => {
    const child = await children.spawnNode({ ...opts, env: { ...opts.env, [portVar]: String(p) } });
    await listening(child, p);
    return child;
  });
  return { port, child: started };
}
