import { describe, expect, it } from 'vitest';
import { formatIssues } from '../../src/contract/format-issues.js';
import { resolveLimits, RunInput } from '../../src/contract/run-input.js';
import type { RunInputArgs } from '../../src/contract/run-input.js';

/** The `path: message` lines of a refused input; fails the test when the input is accepted. */
function refusal(input: unknown): string[] {
  const parsed = RunInput.safeParse(input);
  if (parsed.success) throw new Error(`expected the input to be refused: ${JSON.stringify(input)}`);
  return formatIssues(parsed.error);
}

describe('resolveLimits', () => {
  it("takes the run's own limit first, then the worker's, then the default", () => {
    expect(resolveLimits({ maxTurns: 3 }, { maxTurns: 50, modelTimeoutSeconds: 120 })).toEqual({
      maxTurns: 3,
      observationCharLimit: 12_000,
      modelTimeoutSeconds: 120,
      heartbeatTimeoutSeconds: 5,
    });
  });
});

describe('RunInput', () => {
  it('fills in the defaults when only the task is given; limits and the conversation mode stay open for the worker to fill', () => {
    const input = RunInput.parse({ task: 'List the files.' });

    expect(input).toEqual({
      task: 'List the files.',
      parallelToolCalls: false,
      session: false,
    });
    expect(resolveLimits(input)).toEqual({
      maxTurns: 20,
      observationCharLimit: 12_000,
      modelTimeoutSeconds: 600,
      heartbeatTimeoutSeconds: 5,
    });
    expect(input.instructions).toBeUndefined();
    expect(input.model).toBeUndefined();
    expect(input.tools).toBeUndefined();
  });

  it('keeps every value the caller sets', () => {
    const args: RunInputArgs = {
      task: 'Summarise README.md.',
      instructions: 'Answer in one line.',
      model: 'gpt-custom',
      maxTurns: 3,
      tools: ['read_file', 'list_directory'],
      parallelToolCalls: true,
      maxOutputTokens: 1024,
      reasoningEffort: 'high',
      observationCharLimit: 500,
      modelTimeoutSeconds: 30,
      heartbeatTimeoutSeconds: 5,
      approvalTools: ['read_file'],
      approvalTimeoutSeconds: 3600,
      session: true,
      idleTimeoutSeconds: 600,
      conversation: 'stateless',
      continueAsNewAfterTurns: 50,
      maxTotalTokens: 100_000,
      maxDurationSeconds: 7200,
      maxCostUsd: 2.5,
    };

    expect(RunInput.parse(args)).toEqual(args);
  });

  it('trims the task', () => {
    expect(RunInput.parse({ task: '  List the files.\n' }).task).toBe('List the files.');
  });

  it('refuses an idle timeout outside a session and approval for a tool the run does not offer', () => {
    expect(refusal({ task: 'x', idleTimeoutSeconds: 60 })).toEqual([
      'idleTimeoutSeconds: applies only to a session: set session to true as well',
    ]);
    expect(refusal({ task: 'x', tools: ['read_file'], approvalTools: ['write_file'] })).toEqual([
      "approvalTools[0]: names write_file, which is not among this run's tools",
    ]);
  });

  it('refuses budgets that cannot be met', () => {
    expect(refusal({ task: 'x', maxTotalTokens: 0, maxCostUsd: 0, maxDurationSeconds: 0 })).toHaveLength(3);
  });

  it('refuses unknown keys, so a typo is an error', () => {
    expect(refusal({ task: 'List the files.', maxTurn: 5 })).toEqual([
      expect.stringMatching(/^\(root\): .*"maxTurn"/),
    ]);
  });

  it.each(['', '   ', '\n\t'])('refuses the empty or blank task %j', (task) => {
    expect(refusal({ task })).toEqual(['task: must describe the task']);
  });

  it('refuses an input without a task', () => {
    expect(refusal({})).toEqual([expect.stringMatching(/^task: /)]);
  });

  it.each([1, 20, 1000, 1_000_000])('accepts maxTurns %i', (maxTurns) => {
    expect(RunInput.parse({ task: 'Go.', maxTurns }).maxTurns).toBe(maxTurns);
  });

  it.each([0, -1, 1_000_001, 2.5])('refuses maxTurns %d', (maxTurns) => {
    expect(refusal({ task: 'Go.', maxTurns })).toEqual([expect.stringMatching(/^maxTurns: /)]);
  });

  it('refuses a tool named twice', () => {
    expect(refusal({ task: 'Go.', tools: ['read_file', 'echo', 'read_file'] })).toEqual([
      'tools: must not repeat a tool',
    ]);
  });

  it.each(['read file', '', 'a'.repeat(65), 'tool.name'])('refuses the invalid tool name %j', (name) => {
    expect(refusal({ task: 'Go.', tools: ['echo', name] })).toEqual(['tools[1]: is not a valid tool name']);
  });

  it('accepts an empty tool list, which offers the model no tools', () => {
    expect(RunInput.parse({ task: 'Go.', tools: [] }).tools).toEqual([]);
  });

  it('refuses an observation limit below 100 characters', () => {
    expect(refusal({ task: 'Go.', observationCharLimit: 99 })).toEqual([
      expect.stringMatching(/^observationCharLimit: /),
    ]);
  });

  it('refuses an unknown reasoning effort', () => {
    expect(refusal({ task: 'Go.', reasoningEffort: 'maximum' })).toEqual([
      expect.stringMatching(/^reasoningEffort: /),
    ]);
  });
});
