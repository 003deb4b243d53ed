import { freePort } from '@agent-reach/testkit';
import type { Child, ChildSet, SpawnNodeOptions } from '../proc/children.ts';

/** What a child that lost the race for its port says on the way out. */
const PORT_TAKEN = /EADDRINUSE|address already in use/i;

/**
 * Starts something that listens on a port picked for it, and starts it again on another port
 * when the first was taken before the child could bind it (it was free when picked). `start`
 * throws with the child's output when the child exits; other failures are not retried.
 */
export async function onFreePort<T>(what: string, start: (port: number) => Promise<T>, attempts = 3): Promise<{ port: number; started: T }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return { port, started: await start(port) };
    } catch (err: unknown) {
      if (attempt >= attempts || !PORT_TAKEN.test(String(err))) throw err;
      process.stderr.write(`[bench] ${what}: port ${port} was taken before it could listen; trying another\n`);
    }
  }
}

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
  const { port, started } = await onFreePort(opts.name, async (p) => {
    const child = await children.spawnNode({ ...opts, env: { ...opts.env, [portVar]: String(p) } });
    await listening(child, p);
    return child;
  });
  return { port, child: started };
}
