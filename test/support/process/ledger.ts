import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type { ScriptedModel } from '../scripted-model.js';
import { LEDGER_FILE } from './tools.js';

/** Every line the `charge` tool wrote in these workspaces: one per side effect that really happened. */
export async function ledgerLines(...workspaces: string[]): Promise<string[]> {
  const lines: string[] = [];
  for (const workspace of workspaces) {
    const file = path.join(workspace, LEDGER_FILE);
    if (existsSync(file)) lines.push(...(await readFile(file, 'utf8')).trim().split('\n'));
  }
  return lines;
}

/** Asserts the model's second request told it the first call's outcome is in doubt, as a tool error. */
export function expectToldOutcomeInDoubt(model: ScriptedModel): void {
  const output = JSON.parse(String(model.requests[1]?.body.input[0]?.output)) as {
    error: string;
    message: string;
  };
  expect(output.error).toBe('tool_error');
  expect(output.message).toMatch(/may or may not have happened/);
}
