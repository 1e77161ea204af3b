import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FailureType, toFailureType, UNKNOWN_FAILURE_TYPE } from '../../src/contract/failure-type.js';
import { RunResult } from '../../src/contract/run-result.js';

const sources = path.resolve(import.meta.dirname, '../../src');

async function sourceFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) return sourceFiles(full);
      return Promise.resolve(entry.name.endsWith('.ts') ? [full] : []);
    }),
  );
  return nested.flat();
}

describe('FailureType', () => {
  it('holds every dotted failure type the source names', async () => {
    const named = new Set<string>();
    for (const file of await sourceFiles(sources)) {
      for (const match of (await readFile(file, 'utf8')).matchAll(/'((?:Model|Keel)Error\.[A-Za-z]+)'/g)) {
        named.add(match[1]!);
      }
    }
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((type) => !FailureType.options.includes(type as FailureType))).toEqual([]);
  });

  it('maps a type Keel does not know, or none, to the catch-all, and keeps every known one', () => {
    expect(toFailureType('Acme.OutOfWidgets')).toBe(UNKNOWN_FAILURE_TYPE);
    expect(toFailureType('constructor')).toBe(UNKNOWN_FAILURE_TYPE);
    expect(toFailureType(undefined)).toBe(UNKNOWN_FAILURE_TYPE);
    expect(toFailureType(null)).toBe(UNKNOWN_FAILURE_TYPE);
    for (const type of FailureType.options) expect(toFailureType(type)).toBe(type);
  });

  it('closes errorType in the run result', () => {
    const failed = {
      status: 'failed',
      reason: 'x',
      turns: 1,
      toolCalls: 0,
      usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, totalTokens: 0 },
      lastResponseId: null,
      model: 'm',
    };
    expect(RunResult.safeParse({ ...failed, errorType: 'ModelError.RateLimit' }).success).toBe(true);
    expect(RunResult.safeParse({ ...failed, errorType: 'Acme.OutOfWidgets' }).success).toBe(false);
  });
});
