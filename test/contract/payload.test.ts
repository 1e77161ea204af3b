import { describe, expect, it } from 'vitest';
import type { Observation } from '../../src/contract/observation.js';
import { cutToBytes, fitObservations, jsonBytes, utf8Bytes } from '../../src/contract/payload.js';

const ok = (callId: string, output: string): Observation => ({ callId, ok: true, output });

describe('payload sizes', () => {
  it('counts UTF-8 bytes as Buffer does, surrogate pairs included', () => {
    for (const text of ['', 'abc', '€uro', '😀 ok', 'ä\u0001\u{10FFFF}', '\uD800 lone']) {
      expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });

  it('cuts text to a byte size at a character boundary, as UTF-8 or as JSON', () => {
    expect(cutToBytes('€€€', 7)).toBe('€€');
    expect(cutToBytes('a😀b', 3)).toBe('a');
    expect(cutToBytes('short', 100)).toBe('short');
    // \u0001 is six bytes as JSON, plus the two quotes.
    expect(cutToBytes('\u0001\u0001\u0001', 14, true)).toBe('\u0001\u0001');
  });

  it('leaves observations that fit alone', () => {
    const observations = [ok('a', 'x'.repeat(100)), ok('b', 'y')];
    expect(fitObservations(observations, 1_000)).toEqual(observations);
  });

  it('keeps small results whole and gives the large ones an equal share of the rest', () => {
    const observations = [ok('a', '€'.repeat(400_000)), ok('b', 'ok'), ok('c', '€'.repeat(300_000))];
    const fitted = fitObservations(observations, 1_000_000);
    expect(fitted[1]).toEqual(observations[1]);
    expect(fitted.map((observation) => observation.ok)).toEqual([false, true, false]);
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(1_000_000);
    const [a, , c] = fitted.map((observation) => (observation.ok ? 0 : jsonBytes(observation)));
    expect(Math.abs(a! - c!)).toBeLessThan(10);
    expect(a).toBeGreaterThan(480_000);
  });

  it('cuts by JSON size, so escaped characters cannot blow the budget', () => {
    const fitted = fitObservations([ok('a', '\u0001'.repeat(500_000))], 100_000);
    expect(fitted[0]).toMatchObject({ ok: false, error: 'output_too_large' });
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(100_000);
  });
});
