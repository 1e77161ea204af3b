import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { formatIssues } from '../../src/contract/format-issues.js';

/** The formatted issues of a value `schema` refuses. */
function issuesOf(schema: z.ZodType, value: unknown): string[] {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error(`expected ${JSON.stringify(value)} to be refused`);
  return formatIssues(parsed.error);
}

describe('formatIssues', () => {
  it('names an issue with the value itself (root)', () => {
    expect(issuesOf(z.string().min(3, 'too short'), 'ab')).toEqual(['(root): too short']);
  });

  it('writes object keys with dots and array indexes in brackets', () => {
    const schema = z.object({ a: z.object({ b: z.array(z.object({ c: z.string('must be text') })) }) });

    expect(issuesOf(schema, { a: { b: [{ c: 1 }] } })).toEqual(['a.b[0].c: must be text']);
  });

  it('starts a path with an index without a leading dot', () => {
    const schema = z.array(z.object({ name: z.string('must be text') }));

    expect(issuesOf(schema, [{ name: 'ok' }, { name: 2 }])).toEqual(['[1].name: must be text']);
  });

  it('writes nested indexes back to back', () => {
    const schema = z.array(z.array(z.number('must be a number')));

    expect(issuesOf(schema, [[1], [2, 'x']])).toEqual(['[1][1]: must be a number']);
  });

  it('gives one line per issue, in the order zod reports them', () => {
    const schema = z.object({ first: z.string('must be text'), second: z.number('must be a number') });

    expect(issuesOf(schema, { first: 1, second: 'x' })).toEqual([
      'first: must be text',
      'second: must be a number',
    ]);
  });
});
