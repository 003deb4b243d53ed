import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import type { OutboundHosts } from '@agent-reach/service-kit';
import type { EndpointsFileApplier } from './endpoints-file-applier.ts';
import { isEndpointsFileError, readEndpointsFile } from './endpoints-file.ts';

/** What watching the endpoints file needs. */
export interface EndpointsFileWatcherOptions {
  /** The file (REACH_ENDPOINTS_FILE). */
  path: string;
  /** Hosts its URLs may name (REACH_ENDPOINT_HOSTS), and whether loopback ones too. */
  allowed: OutboundHosts;
  applier: EndpointsFileApplier;
  logger: Logger;
  /** How often the file's mtime and size are compared, for changes fs.watch misses. @default 2000 */
  pollMs?: number;
  /** How long after a change event the file is read (an editor writes in steps). @default 100 */
  settleMs?: number;
}

/** The file's identity and version as stat gives it: a change of any part is a change. */
const versionOf = (s: { mtimeMs: number; size: number; ino: number }) =>
  `${s.mtimeMs}:${s.size}:${s.ino}`;

/**
 * Applies the endpoints file at start and whenever it changes: fs.watch on its folder (editors
 * and config maps replace the file rather than write it), and a light mtime check every `pollMs`
 * for what fs.watch misses (network file systems, a watcher that failed). A file that cannot be
 * read or is not valid is logged with the reason and leaves the stored declarations as they
 * were; it is read again when it changes.
 */
export class EndpointsFileWatcher {
  private readonly log: Logger;
  private watcher: FSWatcher | undefined;
  private poll: NodeJS.Timeout | undefined;
  private settle: NodeJS.Timeout | undefined;
  /** The version last read (applied or refused): the poll reads only another. */
  private seen: string | undefined;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: EndpointsFileWatcherOptions) {
    this.log = o.logger.child({ module: 'endpoints-file', file: o.path });
  }

  /** Applies the file once (awaited), then follows its changes. */
  async start(): Promise<void> {
    await this.applyNow();
    try {
      this.watcher = watch(dirname(this.o.path), { persistent: false }, (_event, name) => {
        if (name === null || name === basename(this.o.path)) this.soon();
      });
      this.watcher.on('error', (err: Error) => {
        this.log.warn({ err }, 'endpoints file watch failed; its changes are found by polling');
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err: unknown) {
      this.log.warn({ err }, 'endpoints file cannot be watched; its changes are found by polling');
    }
    this.poll = setInterval(() => void this.check(), this.o.pollMs ?? 2000);
    this.poll.unref();
  }

  /** Stops following the file; waits for an application under way. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    this.watcher = undefined;
    clearInterval(this.poll);
    clearTimeout(this.settle);
    await this.running;
  }

  /** The file is read again once it has settled. */
  private soon(): void {
    if (this.closed) return;
    clearTimeout(this.settle);
    this.settle = setTimeout(() => void this.applyNow(), this.o.settleMs ?? 100);
    this.settle.unref();
  }

  /** The poll: reads the file when its version is not the one last read. */
  private async check(): Promise<void> {
    try {
      if (versionOf(await stat(this.o.path)) !== this.seen) this.soon();
    } catch {
      // Missing for now: said once, when it was last read.
      if (this.seen !== 'missing') this.soon();
    }
  }

  /** Applies the file after any application under way, one at a time. */
  private applyNow(): Promise<void> {
    this.running = this.running.then(() => this.apply());
    return this.running;
  }

  private async apply(): Promise<void> {
    if (this.closed) return;
    let text: string;
    try {
      const version = versionOf(await stat(this.o.path));
      // One change may raise several events: its version is read once.
      if (version === this.seen) return;
      text = await readFile(this.o.path, 'utf8');
      this.seen = version;
    } catch (err: unknown) {
      this.seen = 'missing';
      this.log.error(
        { code: (err as NodeJS.ErrnoException).code },
        'endpoints file cannot be read; the stored endpoint agents stay as they are',
      );
      return;
    }
    try {
      const entries = readEndpointsFile(this.o.path, text, this.o.allowed);
      await this.o.applier.apply(entries);
    } catch (err: unknown) {
      if (!isEndpointsFileError(err)) {
        // Redis failed midway: the next change or poll tries again.
        this.seen = undefined;
        this.log.error({ err }, 'endpoints file could not be applied; it is tried again');
        return;
      }
      this.log.error(
        { reason: err.message },
        'endpoints file refused; the stored endpoint agents stay as they are',
      );
    }
  }
}
