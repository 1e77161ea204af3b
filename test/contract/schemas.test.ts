import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderPublishedSchemas } from '../../src/eval/json-schemas.js';
import { RunInput } from '../../src/contract/run-input.js';
import { RunResult } from '../../src/contract/run-result.js';
import { schemaErrors, schemasDirectory } from '../support/published-schemas.js';
import type { PublishedSchemaFile } from '../support/published-schemas.js';

const historiesDirectory = path.resolve(import.meta.dirname, '../fixtures/histories');
const contractDocument = readFileSync(path.resolve(import.meta.dirname, '../../docs/contract.md'), 'utf8');

/** A payload of a recorded history, decoded from its base64 JSON. */
function decodePayload(payload: { data: string } | undefined): unknown {
  if (payload === undefined) throw new Error('the event has no payload');
  return JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
}

interface RecordedRun {
  file: string;
  input: unknown;
  /** Absent when the run did not complete (cancelled). */
  result?: unknown;
}

/** The input and result of every run recorded in test/fixtures/histories, all generations. */
function recordedRuns(): RecordedRun[] {
  return readdirSync(historiesDirectory, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const history = JSON.parse(readFileSync(path.join(historiesDirectory, file), 'utf8')) as {
        events: Array<{
          workflowExecutionStartedEventAttributes?: { input?: { payloads: Array<{ data: string }> } };
          workflowExecutionCompletedEventAttributes?: { result?: { payloads: Array<{ data: string }> } };
        }>;
      };
      const started = history.events[0]?.workflowExecutionStartedEventAttributes;
      const completed = history.events.find(
        (event) => event.workflowExecutionCompletedEventAttributes,
      )?.workflowExecutionCompletedEventAttributes;
      return {
        file,
        input: decodePayload(started?.input?.payloads[0]),
        ...(completed ? { result: decodePayload(completed.result?.payloads[0]) } : {}),
      };
    });
}

/** Every status a run result can have, from the zod contract. */
const everyStatus = RunResult.options.map((variant) => variant.shape.status.value).sort();

/** The JSON examples docs/contract.md marks with `<!-- example: <schema file> -->`. */
function documentedExamples(): Array<{ file: PublishedSchemaFile; value: unknown }> {
  return [...contractDocument.matchAll(/<!-- example: ([\w.-]+) -->\s*```json\n([\s\S]*?)```/g)].map(
    ([, file, json]) => ({ file: file as PublishedSchemaFile, value: JSON.parse(json!) as unknown }),
  );
}

/** The `field` names in the first column of the table in docs/contract.md's section `heading`. */
function documentedFields(heading: string): string[] {
  const section = contractDocument.split(/^## /m).find((part) => part.startsWith(`${heading}\n`)) ?? '';
  return [...section.matchAll(/^\| `(\w+)` +\|/gm)].map(([, field]) => field!);
}

/** The top-level fields of a published schema. */
function schemaFields(file: PublishedSchemaFile): string[] {
  return Object.keys((JSON.parse(renderPublishedSchemas()[file]!) as { properties: object }).properties);
}

/** Every field a run input can set, each with a value the worker accepts. */
const fullInput = {
  task: 'Summarise README.md.',
  agent: 'triage',
  instructions: 'Answer in one line.',
  model: 'gpt-5-mini',
  tools: ['read_file', 'list_directory'],
  toolTimeouts: { read_file: 10 },
  parallelToolCalls: true,
  maxOutputTokens: 1024,
  reasoningEffort: 'low',
  stream: false,
  maxTurns: 5,
  observationCharLimit: 4000,
  modelTimeoutSeconds: 120,
  heartbeatTimeoutSeconds: 10,
  approvalTools: ['read_file'],
  approvalTimeoutSeconds: 600,
  session: true,
  idleTimeoutSeconds: 900,
  conversation: 'stateless',
  continueAsNewAfterTurns: 100,
  maxTotalTokens: 200_000,
  maxDurationSeconds: 3600,
  maxCostUsd: 5,
  subAgentDepth: 1,
  truncation: 'auto',
  output: {
    name: 'summary',
    schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    strict: false,
    retries: 1,
  },
  replay: {
    calls: [
      { name: 'read_file', argumentsJson: '{"path":"README.md"}', answer: { ok: true, output: '# Keel' } },
    ],
    unmatched: 'refuse',
    allowTools: [],
  },
};

describe('published JSON Schemas (docs/schemas)', () => {
  it('match what the zod contract generates now; after changing it, run `npm run schemas`', () => {
    const rendered = renderPublishedSchemas();
    const checkedIn = readdirSync(schemasDirectory).filter((file) => file.endsWith('.schema.json'));
    expect(checkedIn.sort(), 'docs/schemas holds exactly the generated files').toEqual(
      Object.keys(rendered).sort(),
    );
    for (const [file, content] of Object.entries(rendered)) {
      const onDisk = JSON.parse(readFileSync(path.join(schemasDirectory, file), 'utf8')) as unknown;
      const generated = JSON.parse(content) as unknown;
      const stale =
        `docs/schemas/${file} is out of date with src/contract: ` +
        'run `npm run schemas` (npx tsx scripts/generate-schemas.ts) and commit the result';
      expect(onDisk, stale).toEqual(generated);
      // Key order too; the layout is left to Prettier (`npm run lint`).
      expect(JSON.stringify(onDisk), stale).toBe(JSON.stringify(generated));
    }
  });

  it('are JSON Schema 2020-12 documents with an id, a title and a description', () => {
    for (const [file, content] of Object.entries(renderPublishedSchemas())) {
      const document = JSON.parse(content) as Record<string, unknown>;
      expect(document.$schema, file).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(document.$id, file).toBe(`urn:keel:${file.replace('.schema.json', '')}`);
      expect(document.title, file).toMatch(/^Keel (run (input|result|state)|eval (file|report))$/);
      expect(document.description, file).toMatch(/^The .+\.$/);
    }
  });
});

describe('run-input.schema.json', () => {
  it('accepts the smallest input: a task', () => {
    expect(schemaErrors('run-input.schema.json', { task: 'List the files.' })).toEqual([]);
  });

  it('accepts an input that sets every field, and the worker accepts it too', () => {
    expect(
      Object.keys(fullInput).sort(),
      'this input should set every field of the schema: add the new ones here',
    ).toEqual(schemaFields('run-input.schema.json').sort());
    expect(schemaErrors('run-input.schema.json', fullInput)).toEqual([]);
    expect(RunInput.safeParse(fullInput).success).toBe(true);
  });

  it.each([
    ['no task', { maxTurns: 5 }, /\(root\) must have required property 'task'/],
    ['an empty task', { task: '' }, /\/task must NOT have fewer than 1 characters/],
    ['an unknown field', { task: 'x', maxTurn: 5 }, /\(root\) must NOT have additional properties/],
    ['a string for a number', { task: 'x', maxTurns: '5' }, /\/maxTurns must be integer/],
    ['a fraction of a turn', { task: 'x', maxTurns: 2.5 }, /\/maxTurns must be integer/],
    ['too many turns', { task: 'x', maxTurns: 1_000_001 }, /\/maxTurns must be <= 1000000/],
    ['an unknown reasoning effort', { task: 'x', reasoningEffort: 'max' }, /\/reasoningEffort must be equal/],
    ['a malformed tool name', { task: 'x', tools: ['read file'] }, /\/tools\/0 must match pattern/],
    ['a bare string', 'List the files.', /\(root\) must be object/],
  ])('refuses %s, as the worker does', (_, input, complaint) => {
    expect(schemaErrors('run-input.schema.json', input)).toEqual(
      expect.arrayContaining([expect.stringMatching(complaint)]),
    );
    expect(RunInput.safeParse(input).success).toBe(false);
  });

  it('leaves only the rules between fields, a blank task and a repeated tool name for the worker to refuse', () => {
    for (const input of [
      { task: '   ' },
      { task: 'x', tools: ['echo', 'echo'] },
      { task: 'x', idleTimeoutSeconds: 60 },
      { task: 'x', tools: ['echo'], approvalTools: ['deploy'] },
    ]) {
      expect(schemaErrors('run-input.schema.json', input)).toEqual([]);
      expect(RunInput.safeParse(input).success).toBe(false);
    }
  });

  it('accepts the input of every recorded run', () => {
    const runs = recordedRuns();
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) expect(schemaErrors('run-input.schema.json', run.input), run.file).toEqual([]);
  });
});

describe('run-result.schema.json', () => {
  it('accepts the result of a real run with a tool call', () => {
    const run = recordedRuns().find((candidate) => candidate.file.endsWith('completed-with-tool.json'));
    expect(run?.result).toMatchObject({ status: 'completed', finalText: 'Hello.', turns: 2, toolCalls: 1 });
    expect(schemaErrors('run-result.schema.json', run?.result)).toEqual([]);
  });

  it('accepts the result of every recorded run, which together cover every status', () => {
    const results = recordedRuns().flatMap((run) => (run.result === undefined ? [] : [run]));
    for (const run of results) {
      expect(schemaErrors('run-result.schema.json', run.result), run.file).toEqual([]);
      expect(RunResult.safeParse(run.result).success, run.file).toBe(true);
    }
    const statuses = new Set(results.map((run) => (run.result as { status: string }).status));
    expect([...statuses].sort()).toEqual(everyStatus);
  });

  it('refuses a result that lacks the field its status promises, or has an unknown status', () => {
    const run = recordedRuns().find((candidate) => candidate.file.endsWith('completed-with-tool.json'));
    const withoutText = { ...(run?.result as Record<string, unknown>) };
    delete withoutText.finalText;
    expect(schemaErrors('run-result.schema.json', withoutText)).not.toEqual([]);
    expect(schemaErrors('run-result.schema.json', { ...withoutText, status: 'done' })).not.toEqual([]);
  });
});

describe('docs/contract.md', () => {
  it('shows examples that validate: inputs, and a result of every status', () => {
    const examples = documentedExamples();
    for (const { file, value } of examples)
      expect(schemaErrors(file, value), JSON.stringify(value)).toEqual([]);
    expect(examples.filter(({ file }) => file === 'run-input.schema.json').length).toBeGreaterThanOrEqual(2);
    const statuses = examples
      .filter(({ file }) => file === 'run-result.schema.json')
      .map(({ value }) => (value as { status: string }).status);
    expect(statuses.sort()).toEqual(everyStatus);
  });

  it('describes every field of the input and of the state, and no others', () => {
    expect(documentedFields('Run input').sort(), 'the field table under "## Run input"').toEqual(
      schemaFields('run-input.schema.json').sort(),
    );
    expect(
      documentedFields('The `state` query').sort(),
      'the field table under "## The `state` query"',
    ).toEqual(schemaFields('run-state.schema.json').sort());
  });
});
