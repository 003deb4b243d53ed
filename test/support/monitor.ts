/**
 * A Redis MONITOR feed, for a test that must know a process looked at something again (a recount,
 * a re-read) before it asserts that nothing changed. On a socket of its own: ioredis' `monitor()`
 * can hand the first lines of the feed to a connection that still waits for a reply.
 */
import { connect } from 'node:net';

/** One command as MONITOR reports it: the client's address and the command's words. */
export interface MonitoredCommand {
  /** `ip:port` as `CLIENT INFO`'s `addr` names the client; `lua` for a script's own calls. */
  source: string;
  /** The command name as sent, then its arguments. */
  args: string[];
}

/** A running MONITOR feed. */
export interface Monitor {
  close(): void;
}

const LINE = /^\+\d+\.\d+ \[\d+ ([^\]]+)\] (.*)$/;
const WORD = /"((?:[^"\\]|\\.)*)"/g;

/** `"a\"b"` as MONITOR quotes it, back to `a"b` (enough for keys and ids). */
function unquote(word: string): string {
  return word.replace(/\\(x[0-9a-f]{2}|.)/g, (_, c: string) =>
    c.length === 3 ? String.fromCharCode(parseInt(c.slice(1), 16)) : c === 'n' ? '\n' : c,
  );
}

/**
 * Starts MONITOR on the Redis at `redisUrl` and calls `onCommand` for every command it reports
 * from then on; resolves once Redis has confirmed the feed. Close it when done: MONITOR costs
 * Redis a copy of every command.
 */
export function monitorCommands(
  redisUrl: string,
  onCommand: (command: MonitoredCommand) => void,
): Promise<Monitor> {
  const url = new URL(redisUrl);
  const socket = connect(Number(url.port || 6379), url.hostname);
  return new Promise<Monitor>((resolve, reject) => {
    let buffered = '';
    // MONITOR's +OK, after AUTH's when there is a password.
    let oks = url.password ? 2 : 1;
    socket.once('error', reject);
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      if (url.password) {
        const user = decodeURIComponent(url.username || 'default');
        socket.write(`AUTH ${user} ${decodeURIComponent(url.password)}\r\n`);
      }
      socket.write('MONITOR\r\n');
    });
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\r\n')) >= 0) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (line.startsWith('-')) {
          reject(new Error(`MONITOR refused: ${line}`));
          socket.destroy();
          return;
        }
        if (line === '+OK' && oks > 0) {
          if (--oks === 0) resolve({ close: () => socket.destroy() });
          continue;
        }
        const found = LINE.exec(line);
        if (!found) continue;
        const args = [...(found[2] ?? '').matchAll(WORD)].map((m) => unquote(m[1] ?? ''));
        onCommand({ source: found[1] ?? '', args });
      }
    });
  });
}
