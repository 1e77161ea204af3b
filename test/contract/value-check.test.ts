import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { format, resolveConfig } from 'prettier';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { planOfJsonSchema } from '../../src/contract/json-schema-plan.js';
import { RunBudgets, RunLimits } from '../../src/contract/run-input.js';
import { RUN_BUDGET_KEYS, RUN_LIMIT_KEYS } from '../../src/contract/run-limits.js';
import { RULES } from '../../src/contract/rules.js';
import { checkValue } from '../../src/contract/value-check.js';
import type { CheckNode } from '../../src/contract/value-check.js';
import { planOf, withRule } from '../../src/contract/value-check-plan.js';
import * as plans from '../../src/workflows/input-plans.js';
import { PLAN_SOURCES, renderInputPlans } from '../../src/workflows/plan-sources.js';
import { toStrictParameters } from '../../src/tools/strict-schema.js';

const historiesDirectory = path.resolve(import.meta.dirname, '../fixtures/histories');

/** Every JSON payload of every recorded history: run inputs, carried state, signals, updates, results. */
function recordedPayloads(): unknown[] {
  const values: unknown[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (typeof node === 'object' && node !== null) {
      const payloads = (node as { payloads?: unknown }).payloads;
      if (Array.isArray(payloads)) {
        for (const payload of payloads as { data?: string; metadata?: { encoding?: string } }[]) {
          const encoding = Buffer.from(payload.metadata?.encoding ?? '', 'base64').toString('utf8');
          if (encoding === 'json/plain' && payload.data !== undefined)
            values.push(JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8')));
        }
      }
      Object.values(node).forEach(visit);
    }
  };
  for (const file of readdirSync(historiesDirectory, { recursive: true, encoding: 'utf8' })) {
    if (file.endsWith('.json')) visit(JSON.parse(readFileSync(path.join(historiesDirectory, file), 'utf8')));
  }
  return values;
}

/** Values that stand in for anything at one place of a value. */
const STAND_INS: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  2,
  1e300,
  '',
  '   ',
  ' x ',
  'a b',
  'x'.repeat(300),
  '😀',
  true,
  [],
  ['a'],
  ['a', 'a'],
  [{}],
  {},
  { zz: 1 },
  { task: 't' },
  { kind: 'task' },
];

/** `value` with the thing at `at` replaced (deleted for `undefined`). */
function replaced(value: unknown, at: readonly PropertyKey[], by: unknown): unknown {
  if (at.length === 0) return by;
  const [head, ...rest] = at;
  if (Array.isArray(value)) {
    const copy = [...(value as unknown[])];
    copy[head as number] = replaced(copy[head as number], rest, by);
    return copy;
  }
  const copy = { ...(value as Record<PropertyKey, unknown>) };
  const next = replaced(copy[head!], rest, by);
  if (next === undefined && rest.length === 0) delete copy[head!];
  else copy[head!] = next;
  return copy;
}

/** Every place in a value, up to a few levels deep. */
function places(value: unknown, depth = 5, at: PropertyKey[] = []): PropertyKey[][] {
  const found = [at];
  if (depth === 0 || typeof value !== 'object' || value === null) return found;
  const entries: [PropertyKey, unknown][] = Array.isArray(value)
    ? (value as unknown[]).slice(0, 3).map((item, index) => [index, item])
    : Object.entries(value);
  for (const [key, child] of entries) found.push(...places(child, depth - 1, [...at, key]));
  return found;
}

/** The values a schema is tried on: each seed, each place in it replaced by each stand-in, an unknown key. */
function variations(seeds: readonly unknown[]): unknown[] {
  const values: unknown[] = [...seeds, ...STAND_INS];
  for (const seed of seeds) {
    for (const at of places(seed)) {
      for (const by of STAND_INS) values.push(replaced(seed, at, by));
      if (typeof seed === 'object' && seed !== null && !Array.isArray(seed))
        values.push(replaced(seed, [...at, 'unknownField'], 1));
    }
  }
  return values;
}

interface Outcome {
  success: boolean;
  data?: unknown;
  issues?: { code: string; path: PropertyKey[]; message: string }[];
}

function zodOutcome(schema: z.ZodType, value: unknown): Outcome {
  const parsed = schema.safeParse(value);
  return parsed.success
    ? { success: true, data: parsed.data }
    : {
        success: false,
        issues: parsed.error.issues.map(({ code, path, message }) => ({ code, path, message })),
      };
}

function planOutcome(plan: CheckNode, value: unknown): Outcome {
  const checked = checkValue(plan, value, RULES);
  return checked.success
    ? { success: true, data: checked.data }
    : {
        success: false,
        issues: checked.issues.map(({ code, path, message }) => ({ code, path, message })),
      };
}

/** Every value on which the plan and zod disagree, and how many were compared. */
function disagreements(
  schema: z.ZodType,
  plan: CheckNode,
  values: readonly unknown[],
): { compared: number; accepted: number; differing: unknown[] } {
  const differing: unknown[] = [];
  let accepted = 0;
  for (const value of values) {
    const expected = zodOutcome(schema, value);
    const actual = planOutcome(plan, value);
    if (expected.success) accepted += 1;
    if (!isDeepStrictEqual(actual, expected)) differing.push({ value, expected, actual });
  }
  return { compared: values.length, accepted, differing: differing.slice(0, 3) };
}

const SEEDS: Record<keyof typeof PLAN_SOURCES, unknown[]> = {
  RUN_INPUT: [
    { task: ' Fix the bug ' },
    {
      task: 'x',
      agent: 'reviewer',
      instructions: 'Be brief.',
      model: ' gpt ',
      tools: ['read_file', 'write_file'],
      toolTimeouts: { read_file: 10 },
      parallelToolCalls: true,
      maxOutputTokens: 64,
      reasoningEffort: 'low',
      stream: false,
      approvalTools: ['write_file'],
      approvalTimeoutSeconds: 60,
      session: true,
      idleTimeoutSeconds: 30,
      conversation: 'stateless',
      continueAsNewAfterTurns: 3,
      maxTurns: 5,
      observationCharLimit: 1000,
      modelTimeoutSeconds: 30,
      heartbeatTimeoutSeconds: 10,
      maxTotalTokens: 100,
      maxDurationSeconds: 60,
      maxCostUsd: 0.5,
    },
    { task: 'x', idleTimeoutSeconds: 5, tools: ['a'], approvalTools: ['b', 'a'] },
  ],
  CARRIED: [],
  EVAL_RUN_INPUT: [
    {
      cases: [
        { caseId: 'one', input: { task: 't' } },
        { caseId: 'two', input: { task: 'u' }, recordedRunId: 'r' },
      ],
    },
    {
      cases: [
        { caseId: 'a', input: { task: 't' } },
        { caseId: 'a', input: { task: 't' } },
      ],
      concurrency: 2,
    },
  ],
  EVAL_CARRIED: [
    { ended: [{ status: 'completed' }, { status: 'failed', errorType: 'KeelError.Unexpected' }] },
  ],
  CASE_STATUS: [{ status: 'failed', errorType: 'ModelError.RateLimited' }, { status: 'max_turns' }],
  CHILD_ENDING: [
    {
      status: 'completed',
      finalText: 'done',
      output: { a: 1 },
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3, cachedInputTokens: 0, reasoningTokens: 0 },
      costUsd: 0.01,
      turns: 1,
    },
    { status: 'failed', reason: 'x', usage: {} },
    { status: 'stopped' },
  ],
  MODEL_ATTEMPT: [{ turn: 2, attempt: 3, maxAttempts: 8, reason: 'failed: 500' }],
  SEND_ARGS: [{ text: '  hello ' }],
  APPROVE_ARGS: [{ callId: 'call_1', arguments: { path: 'a.txt' }, note: 'ok' }],
  REJECT_ARGS: [{ callId: 'call_1', reason: 'no' }],
  STREAM_PUBLISH: [
    {
      turn: 1,
      attempt: 1,
      sequence: 2,
      events: [
        { type: 'text', turn: 1, delta: 'Hel' },
        { type: 'call_start', turn: 1, callId: 'c', name: 'read_file' },
      ],
    },
  ],
  STREAM_READ_ARGS: [{ from: 0 }, { from: 3, limit: 10 }],
  STREAM_WAIT_ARGS: [{ after: -1 }],
};

describe('checkValue with the workflow plans', () => {
  const recorded = recordedPayloads();

  it('src/workflows/input-plans.ts is what `npm run schemas` writes from the zod schemas', async () => {
    const file = path.resolve(import.meta.dirname, '../../src/workflows/input-plans.ts');
    const expected = await format(renderInputPlans(), { ...(await resolveConfig(file)), filepath: file });
    expect(readFileSync(file, 'utf8')).toBe(expected);
    for (const [name, schema] of Object.entries(PLAN_SOURCES))
      expect(plans[name as keyof typeof plans]).toEqual(planOf(schema));
  });

  it.each(Object.keys(PLAN_SOURCES) as (keyof typeof PLAN_SOURCES)[])(
    '%s: gives what zod gives (value, or issues with their messages) on recorded and varied values',
    (name) => {
      const schema: z.ZodType = PLAN_SOURCES[name];
      const seeds = [...SEEDS[name], ...recorded.filter((value) => schema.safeParse(value).success)];
      expect(seeds.length).toBeGreaterThan(0);
      const result = disagreements(schema, plans[name], [...variations(seeds), ...recorded]);
      expect(result.differing).toEqual([]);
      // Both ways: accepted and refused values were compared.
      expect(result.accepted).toBeGreaterThan(0);
      expect(result.compared - result.accepted).toBeGreaterThan(100);
    },
  );

  it('CARRIED was compared on the state carried by recorded runs that continued as new', () => {
    expect(recorded.filter((value) => PLAN_SOURCES.CARRIED.safeParse(value).success).length).toBeGreaterThan(
      0,
    );
  });
});

describe('planOf', () => {
  it('refuses what a plan cannot say the way zod does, naming where', () => {
    expect(() => planOf(z.object({ a: z.string().transform((text) => text.length) }))).toThrow('(root).a');
    expect(() => planOf(z.object({ at: z.string().url() }))).toThrow('string format url');
    expect(() => planOf(z.string().toLowerCase())).toThrow('only trim()');
    expect(() => planOf(z.number().refine((n) => n > 1))).toThrow('withRule');
    expect(() => planOf(z.object({ a: z.string() }).catchall(z.string()))).toThrow(
      'only strict, stripping and loose objects',
    );
    expect(() =>
      planOf(
        z
          .string()
          .optional()
          .default(undefined as never),
      ),
    ).toThrow('default of undefined');
  });

  it('plans a loose object as one that keeps unknown keys, as zod does', () => {
    const schema = z.looseObject({ type: z.literal('object') });
    expect(planOf(schema)).toMatchObject({ type: 'object', unknownKeys: 'keep' });
    const values = [{ type: 'object', properties: { a: 1 } }, { type: 'array' }, {}, 'object', null];
    expect(disagreements(schema, planOf(schema), values).differing).toEqual([]);
  });

  it('writes a rule made with withRule by name, and checkValue runs it from RULES', () => {
    const schema = withRule(z.array(z.string()), 'distinctToolNames', RULES.distinctToolNames);
    expect(planOf(schema)).toEqual({
      type: 'array',
      element: { type: 'string' },
      checks: [{ kind: 'rule', name: 'distinctToolNames' }],
    });
    expect(disagreements(schema, planOf(schema), [['a', 'b'], ['a', 'a'], 'a', [1]]).differing).toEqual([]);
  });
});

describe('planOfJsonSchema, for edited tool arguments', () => {
  const toolSchemas = [
    z.object({
      path: z.string(),
      startLine: z.number().int().min(1).optional(),
      mode: z.enum(['append', 'replace']).optional(),
      edits: z.array(z.object({ text: z.string(), line: z.number().int().optional() })).optional(),
    }),
    z.object({
      query: z.string().min(1).max(200),
      limit: z.number().int().min(1).max(100).default(20),
      ratio: z.number().gt(0).lt(1).nullable(),
      tags: z
        .array(z.string().regex(/^[a-z]+$/))
        .min(1)
        .max(3),
      flag: z.boolean().optional(),
      choice: z.union([z.literal(1), z.literal('one'), z.null()]),
    }),
  ];
  const mcpSchemas: Record<string, unknown>[] = [
    {
      type: 'object',
      properties: {
        name: { type: ['string', 'null'], maxLength: 5 },
        kind: { enum: ['a', 1, null] },
        fixed: { const: 'k' },
        either: {
          anyOf: [
            { type: 'integer', exclusiveMinimum: 0 },
            { type: 'string', minLength: 2 },
          ],
        },
        list: { type: 'array', items: { type: 'number', exclusiveMaximum: 10 }, maxItems: 2 },
        open: { type: 'object', properties: { x: { type: 'number' } } },
        anything: {},
      },
      required: ['name', 'kind', 'open', 'anything'],
    },
  ];
  const seeds: Record<string, unknown>[] = [
    { path: 'a.txt', startLine: 2, mode: 'append', edits: [{ text: 'x', line: 1 }] },
    { query: 'q', limit: 5, ratio: 0.5, tags: ['a'], flag: true, choice: 'one' },
    { name: 'ab', kind: 1, fixed: 'k', either: 3, list: [1], open: { x: 1, y: 2 }, anything: [1] },
  ];

  it.each([
    ...toolSchemas.map((schema) => ['a tool', toStrictParameters(schema)] as const),
    ...mcpSchemas.map((schema) => ['an MCP server', schema] as const),
  ])('on %s’s parameters, gives what zod’s fromJSONSchema gives', (_whose, parameters) => {
    const plan = planOfJsonSchema(parameters);
    expect(plan).toBeDefined();
    const result = disagreements(z.fromJSONSchema(parameters), plan!, variations(seeds));
    expect(result.differing).toEqual([]);
    expect(result.accepted).toBeGreaterThan(0);
  });

  it.each([
    [{ type: 'string', format: 'email' }],
    [{ oneOf: [{ type: 'string' }, { type: 'number' }] }],
    [{ type: 'object', properties: { a: { $ref: '#/$defs/a' } }, $defs: { a: { type: 'string' } } }],
    [{ type: 'object', additionalProperties: { type: 'number' } }],
    [{ type: 'string', anyOf: [{ minLength: 1 }] }],
  ])('leaves %j to the check where the call runs', (schema) => {
    expect(planOfJsonSchema(schema)).toBeUndefined();
  });
});

describe('the run limits without zod', () => {
  it('name the fields of the RunLimits and RunBudgets schemas', () => {
    expect([...RUN_LIMIT_KEYS].sort()).toEqual(Object.keys(RunLimits.shape).sort());
    expect([...RUN_BUDGET_KEYS].sort()).toEqual(Object.keys(RunBudgets.shape).sort());
  });
});
