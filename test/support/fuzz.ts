/**
 * A small seeded generator of hostile JSON values, so a fuzz failure can be reproduced from its
 * seed. Values stay JSON (what every Temporal client sends), with the shapes clients get wrong:
 * wrong types, arrays for objects, nulls, huge strings, prototype keys, extra arguments.
 */
export class Fuzz {
  #state: number;

  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1) (mulberry32). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, below). */
  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  /** One of `choices`. */
  pick<T>(choices: readonly T[]): T {
    return choices[this.int(choices.length)]!;
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A string: empty, blank, short, unicode, a prototype name, or huge. */
  string(): string {
    return this.pick([
      () => '',
      () => '   ',
      () => 'x',
      () => `fuzz-${this.int(1000)}`,
      () => 'Ünïcødé ✓ \u0000 \u202e',
      () => this.pick(PROTOTYPE_KEYS),
      () => 'a'.repeat(250_000),
      () => 'b'.repeat(1_000_000),
      () => 'call_1_1',
    ])();
  }

  /** Any JSON value, nested at most `depth` levels. */
  value(depth = 2): unknown {
    const leaves = [
      () => null,
      () => true,
      () => false,
      () => 0,
      () => -1,
      () => 1.5,
      () => 1e308,
      () => 2 ** 53 + 1,
      () => this.string(),
    ];
    const nested =
      depth <= 0
        ? []
        : [
            () => Array.from({ length: this.int(4) }, () => this.value(depth - 1)),
            () => this.object(depth - 1),
          ];
    return this.pick([...leaves, ...nested])();
  }

  /** An object with a few keys, some of them prototype names (own properties, as JSON.parse makes them). */
  object(depth = 1, keys: readonly string[] = []): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    for (let index = this.int(4); index > 0; index--) {
      const key =
        this.chance(0.5) && keys.length > 0 ? this.pick(keys) : this.pick([...PROTOTYPE_KEYS, 'x', 'colour']);
      Object.defineProperty(result, key, {
        value: this.value(depth),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return result;
  }
}

/** Keys that reach Object.prototype when code indexes a plain object with them. */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
];
