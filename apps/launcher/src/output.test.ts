import { describe, expect, it } from 'vitest';
import { logFormatOf, StackOutput, type LogFormat } from './output.ts';

function capture(format: LogFormat) {
  let text = '';
  const out = new StackOutput({ format, write: (t) => void (text += t) });
  return { out, lines: () => text.split('\n').slice(0, -1) };
}

const warn = JSON.stringify({
  level: 40,
  time: Date.UTC(2026, 11, 4, 10, 42, 7),
  pid: 1,
  hostname: 'h',
  service: 'router',
  module: 'auth',
  msg: 'AUTH IS OFF',
});
const withFields = JSON.stringify({ level: 30, time: 0, msg: 'listening', address: 'http://x' });
const error = JSON.stringify({
  level: 50,
  time: 0,
  err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (a.js:1:1)' },
  msg: 'failed',
});

describe('LOG_FORMAT', () => {
  it('is pretty unless json, and refuses anything else', () => {
    expect(logFormatOf(undefined)).toBe('pretty');
    expect(logFormatOf('')).toBe('pretty');
    expect(logFormatOf('pretty')).toBe('pretty');
    expect(logFormatOf('json')).toBe('json');
    expect(() => logFormatOf('JSON')).toThrow(/LOG_FORMAT=JSON: expected pretty/);
  });
});

describe('StackOutput, pretty', () => {
  it("prints a process's pino line as one labelled line: time, level, module, message, fields", () => {
    const { out, lines } = capture('pretty');
    out.lineOf('router')(warn);
    out.lineOf('registry-sync')(withFields);
    const [first, second] = lines();
    expect(first).toMatch(/^\[router\] {9}\[\d\d:\d\d:\d\d\] WARN: auth: AUTH IS OFF$/);
    expect(second).toMatch(
      /^\[registry-sync\] {2}\[\d\d:\d\d:\d\d\] INFO: listening \{"address":"http:\/\/x"\}$/,
    );
  });

  it('keeps the label on each line of an error stack, and prints other lines as they came', () => {
    const { out, lines } = capture('pretty');
    out.lineOf('router')(error);
    out.lineOf('redis')('1:M * Ready to accept connections');
    out.lineOf('redis')('{"not":"pino"}');
    const printed = lines();
    expect(printed[0]).toMatch(/^\[router\] +\[\d\d:\d\d:\d\d\] ERROR: failed$/);
    expect(printed.filter((l) => l.includes('at f (a.js:1:1)'))).toHaveLength(1);
    expect(printed.every((l) => /^\[(router|redis)\] /.test(l))).toBe(true);
    expect(printed.slice(-2)).toEqual([
      '[redis]          1:M * Ready to accept connections',
      '[redis]          {"not":"pino"}',
    ]);
  });

  it("prints the launcher's lines after [start] and the banner's text as it is", () => {
    const { out, lines } = capture('pretty');
    out.say('router started (pid 7)');
    out.banner({ headline: 'up', text: '\nup.\n  a line\n\n', fields: { router: 'x' } });
    expect(lines()).toEqual(['[start] router started (pid 7)', '', 'up.', '  a line', '']);
  });
});

describe('StackOutput, json', () => {
  it('prints one JSON object a line: pino lines as they came, the rest wrapped', () => {
    const { out, lines } = capture('json');
    out.lineOf('router')(warn);
    out.lineOf('redis')('1:M * Ready to accept connections');
    out.say('router started (pid 7)');
    out.banner({ headline: 'Agent-Reach is running', text: 'ignored', fields: { router: 'u' } });
    const printed = lines();
    expect(printed[0]).toBe(warn);
    const parsed = printed.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.slice(1)).toEqual([
      {
        level: 30,
        time: expect.any(Number),
        service: 'redis',
        msg: '1:M * Ready to accept connections',
      },
      { level: 30, time: expect.any(Number), service: 'launcher', msg: 'router started (pid 7)' },
      {
        level: 30,
        time: expect.any(Number),
        service: 'launcher',
        router: 'u',
        msg: 'Agent-Reach is running',
      },
    ]);
  });
});

describe('StackOutput.settled', () => {
  it('waits for the processes to stop printing, and no longer than its limit', async () => {
    const { out } = capture('pretty');
    const line = out.lineOf('router');
    const started = performance.now();
    await out.settled(50, 1_000); // nothing printed yet: at once
    expect(performance.now() - started).toBeLessThan(50);
    const timer = setInterval(() => line('tick'), 10);
    try {
      line('tick');
      const waiting = performance.now();
      await out.settled(50, 200); // never quiet: the limit ends the wait
      expect(performance.now() - waiting).toBeGreaterThanOrEqual(195);
    } finally {
      clearInterval(timer);
    }
    line('last');
    const quietFrom = performance.now();
    await out.settled(50, 1_000);
    expect(performance.now() - quietFrom).toBeGreaterThanOrEqual(45);
  });
});
