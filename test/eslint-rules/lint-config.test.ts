import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.join(import.meta.dirname, '../..');
const promiseRules = [
  '@typescript-eslint/no-floating-promises',
  '@typescript-eslint/no-misused-promises',
  'keel/no-unawaited-promise-variable',
];

describe('the lint configuration', () => {
  it.each([
    'src/worker.ts',
    'src/workflows/agent-run.ts',
    'test/setup.ts',
    'bench/run.ts',
    'scripts/generate-schemas.ts',
  ])('checks promises in %s as errors, with `void` no escape', async (file) => {
    const config = (await new ESLint({ cwd: root }).calculateConfigForFile(file)) as {
      rules: Record<string, [number, ...unknown[]]>;
    };
    for (const rule of promiseRules) expect(config.rules[rule]?.[0], rule).toBe(2);
    expect(config.rules['@typescript-eslint/no-floating-promises']?.[1]).toMatchObject({ ignoreVoid: false });
  });
});
