import { freePort } from '@agent-reach/testkit';

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
