import { describe, expect, it } from 'vitest';
import { ms, percent, rate, table } from './format.ts';

describe('format', () => {
  it('pads columns, right-aligns numbers and shows nothing as -', () => {
    expect(
      table(
        ['NAME', 'N', 'NOTE'],
        [
          ['a', 1, null],
          ['long-name', 100, 'x'],
        ],
      ).split('\n'),
    ).toEqual(['NAME         N  NOTE', 'a            1  -', 'long-name  100  x']);
  });

  it('writes durations, shares and rates for people', () => {
    expect([ms(0), ms(0.5), ms(3.25), ms(12.4), ms(1250), ms(125_000), ms(null)]).toEqual([
      '0 ms',
      '500 µs',
      '3.3 ms',
      '12 ms',
      '1.25 s',
      '2 min 5 s',
      '-',
    ]);
    expect([percent(0.985), percent(1), percent(null)]).toEqual(['98.5 %', '100.0 %', '-']);
    expect([rate(0), rate(0.0133), rate(12.44), rate(240)]).toEqual(['0', '0.013', '12.4', '240']);
  });
});
