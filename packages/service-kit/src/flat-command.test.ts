import { describe, expect, it } from 'vitest';
import { Command } from 'ioredis';
import { FlatCommand } from './flat-command.ts';

/** What a command puts on the socket, as bytes. */
const bytes = (w: string | Buffer) => (typeof w === 'string' ? Buffer.from(w, 'utf8') : w);

describe('FlatCommand', () => {
  const cases: [string, (string | number | Buffer)[]][] = [
    ['evalsha', ['0123abcd', 2, 't:{a}:task:1', 't:{a}:index', '', 'x'.repeat(3000)]],
    ['eval', ['return 1', 0]],
    // Multi-byte text: lengths are in bytes, not characters.
    ['evalsha', ['sha', 1, 'k', '{"name":"Zoë","city":"東京","emoji":"🚀"}', -1.5, 0]],
    ['ping', []],
    // A Buffer argument: written as ioredis writes it.
    ['set', ['k', Buffer.from([0, 255, 10, 13])]],
  ];
  it.each(cases)('writes %s as ioredis does, byte for byte', (name, args) => {
    const ours = new FlatCommand(name, [...args], { replyEncoding: 'utf8' });
    const theirs = new Command(name, [...args], { replyEncoding: 'utf8' });
    expect(bytes(ours.toWritable({}))).toEqual(bytes(theirs.toWritable({})));
  });

  it('writes a batch call of hundreds of arguments as one string', () => {
    const args = Array.from({ length: 600 }, (_, i) => `arg-${i}`);
    const written = new FlatCommand('evalsha', ['sha', 0, ...args]).toWritable({});
    expect(typeof written).toBe('string');
    const w = String(written);
    expect(w).toContain('$7\r\narg-599\r\n');
    expect(w.startsWith('*603\r\n$7\r\nevalsha\r\n$3\r\nsha\r\n$1\r\n0\r\n')).toBe(true);
  });
});
