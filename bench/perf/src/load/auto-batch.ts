/**
 * Gathers the submissions a caller makes in one tick of the event loop and sends them together,
 * as ioredis' auto-pipelining does for commands: no submission waits longer than the current
 * tick, and a burst costs one request instead of one each. `send` answers one outcome per key,
 * in order: undefined for accepted, an Error (possibly a RetryLater) for refused.
 */
export function autoBatch(
  send: (keys: string[]) => Promise<(Error | undefined)[]>,
  maxBatch: number,
): (key: string) => Promise<void> {
  let queue: { key: string; resolve(): void; reject(err: unknown): void }[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    for (let i = 0; i < batch.length; i += maxBatch) {
      const part = batch.slice(i, i + maxBatch);
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
