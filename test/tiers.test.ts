import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { browserTests, terminalTests, unitTests } from './tiers.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** What a unit test may not reach: it runs with no dev server, no terminal and no browser. */
const OUT_OF_TIER: ReadonlyArray<[RegExp, string]> = [
  [/\binject\(/u, 'the global set-up (the dev server, the bundle, the built package)'],
  [/\bstartPostgres\(/u, 'a PostgreSQL server'],
  [/support\/terminal\.js'/u, 'a terminal'],
  [/from 'playwright-core'/u, 'a browser'],
];

/** The test files and test helpers `file` imports by a relative path, itself included, transitively. */
function localImports(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const source = readFileSync(path.join(root, file), 'utf8');
  for (const [, specifier] of source.matchAll(/from '(\.{1,2}\/[^']+)'/gu)) {
    const resolved = path.normalize(path.join(path.dirname(file), specifier!.replace(/\.js$/u, '.ts')));
    // Only the tests' own helpers: src/ is the code under test and reaches no test server.
    if (resolved.startsWith('test/') && existsSync(path.join(root, resolved))) localImports(resolved, seen);
  }
  return seen;
}

describe('the test tiers', () => {
  it('list only files that exist, each in one tier', () => {
    const listed = [...unitTests, ...terminalTests, ...browserTests];
    expect(listed.filter((file) => !existsSync(path.join(root, file)))).toEqual([]);
    expect(listed.filter((file, index) => listed.indexOf(file) !== index)).toEqual([]);
  });

  it('keep unit tests away from the server, terminals and browsers, also through their helpers', () => {
    const reaches = unitTests.flatMap((file) =>
      [...localImports(file)].flatMap((reached) => {
        // This file names the patterns it looks for.
        if (reached === 'test/tiers.test.ts') return [];
        const source = readFileSync(path.join(root, reached), 'utf8');
        return OUT_OF_TIER.filter(([pattern]) => pattern.test(source)).map(
          ([, what]) => `${file} reaches ${what} through ${reached}`,
        );
      }),
    );
    expect(reaches).toEqual([]);
  });

  it('see a unit test that would reach the server through a helper', () => {
    // The check above must be able to fail: a file known to reach the server through its helpers.
    const reached = [...localImports('test/durability/shutdown.test.ts')];
    expect(reached.some((file) => /\binject\(/u.test(readFileSync(path.join(root, file), 'utf8')))).toBe(
      true,
    );
  });
});
