import { Command, type Cluster, type Redis } from 'ioredis';

/** An argument as ioredis takes one. */
type Arg = string | number | Buffer;

/**
 * An ioredis command whose RESP text is built as one flat string. ioredis' own `toWritable`
 * appends each argument with `+=`: a batch script's call (hundreds of arguments: a tick's claims,
 * a tick's deliveries) becomes a string of hundreds of pieces, each piece a heap object, that the
 * socket write must then flatten. Built from an array joined once, the same bytes cost less
 * (bench/results/2026-12-06-flat-commands.md). A command with a Buffer argument is written as
 * ioredis writes it.
 *
 * Its arguments are taken as given (flat: none is an array), each number made a string as ioredis
 * makes it. ioredis' own constructor copies them with `Array.prototype.flat`, which costs about
 * 0.1 µs an argument on Node 20: 20 times a plain copy, and most of the cost of building a batch
 * call (bench/results/2026-12-07-flat-args.md).
 */
export class FlatCommand extends Command {
  constructor(
    name: string,
    args: readonly Arg[],
    options?: ConstructorParameters<typeof Command>[2],
    callback?: ConstructorParameters<typeof Command>[3],
  ) {
    super(name, [], options, callback);
    this.args = args.slice();
    this.stringifyArguments();
  }

  override toWritable(socket: object): string | Buffer {
    const args = this.args;
    const parts = new Array<string>(args.length + 1);
    parts[0] = `*${args.length + 1}\r\n$${Buffer.byteLength(this.name)}\r\n${this.name}\r\n`;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i];
      if (typeof arg !== 'string') return super.toWritable(socket);
      parts[i + 1] = `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
    }
    return parts.join('');
  }
}

/**
 * Sends `commands` (each `[name, args]`) now, in order, as {@link FlatCommand}s past any
 * auto-pipelining, in one write to the socket (`cork()` around them), and answers each one's
 * reply (strings). They leave before the connection's auto-pipelined commands of the same turn,
 * as a pipeline's `exec()` does, for about half of a pipeline's CPU per command
 * (bench/results/2026-12-07-corked-writes.md). A Cluster client (one socket per master) or a
 * connection not ready takes them as separate commands, as it would take a pipeline's.
 */
export function sendFlatAll(
  redis: Redis | Cluster,
  commands: readonly (readonly [name: string, args: readonly Arg[]])[],
): Promise<unknown>[] {
  return inOneWrite(redis, () => commands.map(([name, args]) => sendNow(redis, name, args)));
}

/**
 * Runs `send`, and the commands it sends on `redis` synchronously leave in one write to the
 * socket (`cork()` around it) rather than one write each: one system call, and one reply to wake
 * the process where Redis answers them in one go. On a connection that auto-pipelines they join
 * the turn's pipeline as before; a Cluster client (one socket per master) or a connection not
 * ready writes as it would.
 */
export function inOneWrite<T>(redis: Redis | Cluster, send: () => T): T {
  const stream = redis.status === 'ready' && 'stream' in redis ? redis.stream : undefined;
  stream?.cork();
  try {
    return send();
  } finally {
    stream?.uncork();
  }
}

/** Sends `name` with `args` as a {@link FlatCommand} past any auto-pipelining; its reply. */
function sendNow(redis: Redis | Cluster, name: string, args: readonly Arg[]): Promise<unknown> {
  const command = new FlatCommand(name, args, { replyEncoding: 'utf8' });
  void redis.sendCommand(command);
  return command.promise;
}

/**
 * Sends `name` with `args` as a {@link FlatCommand} and resolves with its reply (strings, as
 * ioredis' own methods give). A client that auto-pipelines gets the command through its own
 * method instead, so that it joins the event-loop turn's pipeline as before.
 */
export function sendFlat(
  redis: Redis | Cluster,
  name: string,
  args: (string | number)[],
): Promise<unknown> {
  if (redis.options.enableAutoPipelining) return redis.call(name, ...args);
  return sendNow(redis, name, args);
}
