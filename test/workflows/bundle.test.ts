import { readFile } from 'node:fs/promises';
import { describe, expect, inject, it } from 'vitest';

/** The modules webpack put in a workflow bundle (it opens each with its path in a comment). */
function bundledModules(code: string): string[] {
  return [...code.matchAll(/\n\/\*\*\*\/ "(\.\/[^"]+)"/g)].map((match) => match[1]!);
}

describe('the workflow bundle', () => {
  // Every run evaluates its workflow's modules again (the SDK's reusable V8 context keeps one module
  // cache per workflow), so zod and Keel's zod schemas cost ~45 ms of CPU and ~1 MiB per run: the
  // workflow checks values against plans instead (src/contract/value-check.ts, BENCHMARKS.md).
  it('holds no zod: the workflow checks its input against generated plans', async () => {
    const modules = bundledModules(await readFile(inject('workflowBundlePath'), 'utf8'));
    expect(modules.some((name) => name.includes('/src/workflows/input-plans.ts'))).toBe(true);
    expect(modules.filter((name) => /\/node_modules\/zod\//.test(name))).toEqual([]);
  });
});
