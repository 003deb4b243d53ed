import { describe, expect, it } from 'vitest';
import { loadQuery, queryText, regexLiteral, renderQuery, stringLiteral } from './queries.ts';
import { isInvalidWindowError, parseWindow, timeFilter } from './window.ts';

describe('query templates', () => {
  it('fills Grafana-style variables, with every capability by default', () => {
    const q = renderQuery(
      'SELECT 1 FROM m WHERE "capability" =~ /^$capability$/ AND $timeFilter GROUP BY "$group"',
      {
        timeFilter: 'time > now() - 1m',
        group: 'agent_id',
      },
    );
    expect(q).toBe(
      'SELECT 1 FROM m WHERE "capability" =~ /^.*$/ AND time > now() - 1m GROUP BY "agent_id"',
    );
  });

  it('tells $__interval from $__interval_ms', () => {
    expect(
      renderQuery('time($__interval) $__interval_ms', {
        timeFilter: '',
        __interval: '1m',
        __interval_ms: 60000,
      }),
    ).toBe('time(1m) 60000');
  });

  it('refuses a template whose variable has no value', () => {
    expect(() => renderQuery('$__range_s', { timeFilter: '' })).toThrow(/\$__range_s has no value/);
  });

  it('escapes values for regular expressions and string literals', () => {
    expect(regexLiteral('a.b-c:d/e')).toBe('a\\.b\\-c:d\\/e');
    expect(new RegExp(`^${regexLiteral('x.*(y)')}$`).test('x.*(y)')).toBe(true);
    expect(stringLiteral("it's \\")).toBe("it\\'s \\\\");
  });

  it('loads a shipped file without its comment lines', () => {
    expect(queryText('-- a comment\nSELECT 1\n  FROM m\n')).toBe('SELECT 1 FROM m');
    const q = loadQuery('receipt-latency');
    expect(q.startsWith('SELECT MEAN("latency_ms")')).toBe(true);
    expect(q).not.toContain('--');
  });
});

describe('windows', () => {
  it('parses durations into seconds and a Grafana-style time filter', () => {
    expect(parseWindow('15m')).toEqual({ literal: '15m', seconds: 900 });
    expect(parseWindow('2h').seconds).toBe(7200);
    expect(parseWindow('7d').seconds).toBe(604_800);
    expect(timeFilter(parseWindow('30s'))).toBe('time >= now() - 30s and time <= now()');
  });

  it.each(['', '15', 'm', '0m', '15 m', '1y', '-5m', '15m; DROP', '32d'])('refuses %j', (text) => {
    let caught: unknown;
    try {
      parseWindow(text);
    } catch (err) {
      caught = err;
    }
    expect(isInvalidWindowError(caught)).toBe(true);
  });
});
