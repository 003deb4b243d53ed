/**
 * Gathers the submissions a caller makes in one tick of the event loop and sends them together,
 * as ioredis' auto-pipelining does for commands: no submission waits longer than the current
 * tick, and a burst costs one request instead of one each. `send` answers one outcome per key,
 * in order: undefined for accepted, an Error (possibly a RetryLater) for refused. `maxBatch` may
 * be a function, read at each flush (a limit that changes between runs).
 */
export function autoBatch(
  send: (keys: string[]) => Promise<(Error | undefined)[]>,
  maxBatch: number | (() => number),
): (key: string) => Promise<void> {
  let queue: { key: string; resolve(): void; reject(err: unknown): void }[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    const max = Math.max(1, typeof maxBatch === 'number' ? maxBatch : maxBatch());
    for (let i = 0; i < batch.length; i += max) {
      const part = batch.slice(i, i + max);
      send(part.map((p) => p.key)).then(
        (outcomes) =>
          part.forEach((p, j) => {
            const err = outcomes[j];
            if (err) p.reject(err);
            else p.resolve();
          }),
        (err: unknown) => part.forEach((p) => p.reject(err)),
      );
    }
  };
  return (key) =>
    new Promise<void>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush);
      queue.push({ key, resolve, reject });
    });
}
