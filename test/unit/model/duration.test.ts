import { describe, expect, it } from 'vitest';
import { goDuration, parseDuration } from '../../../src/model/duration.ts';

describe('Go durations', () => {
  it.each([
    [0, '0s'],
    [250, '250ms'],
    [-1500, '-1.5s'],
    [45_000, '45s'],
    [45_400, '45.4s'],
    [83_000, '1m23s'],
    [3_600_000, '1h0m0s'],
    [3_723_000, '1h2m3s'],
  ])('goDuration(%d) is %s, as time.Duration.String() prints it', (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });

  it('parseDuration reads what goDuration writes, and refuses anything else', () => {
    for (const ms of [250, 45_000, 45_400, 83_000, 3_723_000]) expect(parseDuration(goDuration(ms))).toBe(ms);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    for (const bad of ['', 'ten', '5', '1h x']) expect(() => parseDuration(bad)).toThrow(/invalid duration/);
  });
});
