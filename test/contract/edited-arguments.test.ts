import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  explainArgumentIssues,
  expectedType,
  fillOmittedOptionals,
} from '../../src/contract/edited-arguments.js';
import { toStrictParameters } from '../../src/tools/strict-schema.js';

/** A tool schema as a tool defines it, and the strict parameters the workflow checks edited arguments with. */
const schema = z.object({
  path: z.string(),
  startLine: z.number().int().min(1).optional(),
  mode: z.enum(['append', 'replace']).optional(),
  edits: z.array(z.object({ text: z.string(), line: z.number().int().optional() })).optional(),
});
const parameters = toStrictParameters(schema);
const check = z.fromJSONSchema(parameters);

function problems(value: unknown): string[] {
  const filled = fillOmittedOptionals(parameters, value);
  const parsed = check.safeParse(filled);
  return parsed.success ? [] : explainArgumentIssues(parameters, filled, parsed.error);
}

describe('fillOmittedOptionals', () => {
  it('fills every optional field left out with null, nested too, and keeps the fields given', () => {
    const filled = fillOmittedOptionals(parameters, { path: 'a.txt', edits: [{ text: 'x' }] });
    expect(filled).toEqual({
      path: 'a.txt',
      edits: [{ text: 'x', line: null }],
      startLine: null,
      mode: null,
    });
    expect(check.safeParse(filled).success).toBe(true);
  });

  it('leaves a required field missing, and odd values as they are', () => {
    expect(fillOmittedOptionals(parameters, { startLine: 2 })).toEqual({
      startLine: 2,
      mode: null,
      edits: null,
    });
    expect(fillOmittedOptionals(parameters, 'not an object')).toBe('not an object');
    // A key named like Object's own does not find Object's.
    expect(fillOmittedOptionals(parameters, { path: 'a', constructor: 1 })).toMatchObject({ constructor: 1 });
  });
});

describe('explainArgumentIssues', () => {
  it('names the field, the type it takes and what was given', () => {
    expect(problems({ path: 'a.txt', startLine: 'x' })).toEqual([
      'startLine: expected a whole number or null, got "x"',
    ]);
    expect(problems({ path: 'a.txt', mode: 'delete' })).toEqual([
      'mode: expected one of "append", "replace" or null, got "delete"',
    ]);
    expect(problems({ path: 'a.txt', edits: [{ text: 3 }] })).toEqual([
      'edits[0].text: expected a string, got 3',
    ]);
  });

  it('says a required field is missing, and keeps zod’s word for bounds and unknown fields', () => {
    expect(problems({})).toEqual(['path: missing; expected a string']);
    expect(problems({ path: 'a', startLine: 0 })).toEqual([
      expect.stringMatching(/^startLine: .*>=1.*, got 0$/),
    ]);
    expect(problems({ path: 'a', colour: 'blue' })).toEqual([
      expect.stringMatching(/^\(root\): Unrecognized key.*colour/),
    ]);
  });

  it('cuts a long given value short', () => {
    const [line] = problems({ path: 'x'.repeat(10), startLine: 'y'.repeat(1000) });
    expect(line!.length).toBeLessThan(200);
  });
});

describe('expectedType', () => {
  it('reads unions, enums and constants', () => {
    expect(expectedType({ anyOf: [{ type: 'string' }, { type: 'null' }] })).toBe('a string or null');
    expect(expectedType({ const: 'x' })).toBe('"x"');
    expect(expectedType({ type: ['boolean', 'null'] })).toBe('true or false or null');
    expect(expectedType({})).toBe('a value');
  });
});
