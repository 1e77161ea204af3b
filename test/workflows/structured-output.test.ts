import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../src/agents/define-agent.js';
import { structuredOutput } from '../../src/agents/structured-output.js';
import { RunOutputError } from '../../src/client.js';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The shape a caller wants back: closed, every field required, so strict structured outputs take it. */
const Ticket = z.object({
  label: z.enum(['bug', 'question', 'feature']),
  priority: z.number().int().min(1).max(5),
  summary: z.string(),
});
const ticket = { label: 'bug', priority: 2, summary: 'Login fails after the upgrade.' };

/** The user messages a request sent, in order. */
function userMessages(body: Record<string, unknown>): string[] {
  const input = body.input as { type?: string; role?: string; content?: unknown }[];
  return input
    .filter((item) => item.type === 'message' && item.role === 'user')
    .map((item) => (typeof item.content === 'string' ? item.content : JSON.stringify(item.content)));
}

describe('structured output: a run declares the shape of its answer', () => {
  it('asks the model for it as text.format, strict, and the result carries the value, typed by KeelClient', async () => {
    await withScenario(server, [reply.text(JSON.stringify(ticket))], {}, async ({ keel, model }) => {
      const runId = await keel.startRun({
        task: 'Triage: "I cannot log in since the upgrade."',
        output: structuredOutput(Ticket, { name: 'ticket' }),
      });
      const output = await keel.waitForOutput(runId, Ticket);
      // Typed: a wrong field name would not compile.
      const label: 'bug' | 'question' | 'feature' = output.label;
      expect(label).toBe('bug');
      expect(output).toEqual(ticket);
      const result = await keel.waitForResult(runId);
      expect(result).toMatchObject({
        status: 'completed',
        output: ticket,
        finalText: JSON.stringify(ticket),
      });
      expect(model.requests[0]!.body.text).toEqual({
        format: {
          type: 'json_schema',
          name: 'ticket',
          strict: true,
          schema: {
            type: 'object',
            properties: {
              label: { type: 'string', enum: ['bug', 'question', 'feature'] },
              priority: { type: 'integer', minimum: 1, maximum: 5 },
              summary: { type: 'string' },
            },
            required: ['label', 'priority', 'summary'],
            additionalProperties: false,
          },
        },
      });
    });
  });

  it.each(['chained', 'stateless'] as const)(
    'sends an answer that does not match back with its problems, and completes with the one that does (%s)',
    async (conversation) => {
      const steps = [
        reply.text('Sure! It is a bug.'),
        reply.text(JSON.stringify({ label: 'bug', priority: 9, summary: 'x', extra: true })),
        reply.text('```json\n' + JSON.stringify(ticket) + '\n```'),
      ];
      await withScenario(server, steps, {}, async ({ run, model }) => {
        const { result } = await run({
          task: 'Triage it.',
          conversation,
          output: { schema: z.toJSONSchema(Ticket, { io: 'output' }) as { type: 'object' } },
        });
        expect(result).toMatchObject({ status: 'completed', output: ticket, turns: 3 });
        const [, second, third] = model.requests.map((request) => userMessages(request.body).at(-1) ?? '');
        expect(second).toContain('Your answer does not match the required output schema "output"');
        expect(second).toContain('the answer is not JSON');
        expect(third).toContain('priority: must be <= 5');
        expect(third).toContain('(root): must NOT have additional properties ("extra")');
        // A schema with the $schema keyword zod writes is still strict: every object is closed.
        expect(model.requests[0]!.body.text).toMatchObject({ format: { strict: true, name: 'output' } });
      });
    },
  );

  it('fails the run with KeelError.InvalidOutput once its retries are spent, saying what was wrong', async () => {
    const steps = [
      reply.text('{"label": "bug"}'),
      reply.text('{"label": "spam", "priority": 1, "summary": ""}'),
    ];
    await withScenario(server, steps, {}, async ({ keel, model }) => {
      const runId = await keel.startRun({
        task: 'Triage it.',
        output: { ...structuredOutput(Ticket), retries: 1 },
      });
      const result = await keel.waitForResult(runId);
      expect(result).toMatchObject({ status: 'failed', errorType: 'KeelError.InvalidOutput', turns: 2 });
      expect(result.status === 'failed' && result.reason).toContain(
        'does not match the output schema "output" after 1 retry',
      );
      expect(result.status === 'failed' && result.reason).toContain(
        'label: must be equal to one of the allowed values',
      );
      const refused = await keel.waitForOutput(runId, Ticket).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(RunOutputError);
      expect((refused as RunOutputError).message).toContain('it ended failed');
      expect(model.requests).toHaveLength(2);
    });
  });

  it('refuses a schema that is not JSON Schema before the model is asked, and one whose root is no object at once', async () => {
    await withScenario(server, [], {}, async ({ keel, model }) => {
      const invalid = await keel.startRun({
        task: 'Triage it.',
        output: { schema: { type: 'object', properties: { label: { type: 'label' } } } },
      });
      expect(await keel.waitForResult(invalid)).toMatchObject({
        status: 'failed',
        errorType: 'KeelError.InvalidInput',
      });
      await expect(
        keel.startRun({ task: 'Triage it.', output: { schema: { type: 'array' } as never } }),
      ).rejects.toThrow('output.schema.type: Invalid input: expected "object"');
      expect(model.requests).toHaveLength(0);
    });
  });

  it("an agent's output applies to its runs, a run's own output wins, and it is part of the agent's version", async () => {
    const triage = defineAgent({ name: 'triage', instructions: 'Triage tickets.', output: Ticket });
    const plain = defineAgent({ name: 'triage', instructions: 'Triage tickets.' });
    const Label = z.object({ label: z.string() });
    const steps = [reply.text(JSON.stringify(ticket)), reply.text('{"label":"bug"}')];
    await withScenario(server, steps, { agents: [triage] }, async ({ keel, model }) => {
      const first = await keel.startRun({ agent: 'triage', task: 'Triage it.' });
      expect(await keel.waitForOutput(first, Ticket)).toEqual(ticket);
      const second = await keel.startRun({
        agent: 'triage',
        task: 'Only the label.',
        output: structuredOutput(Label),
      });
      expect(await keel.waitForOutput(second, Label)).toEqual({ label: 'bug' });
      expect(model.requests[0]!.body.text).toMatchObject({
        format: { name: 'output', schema: { required: ['label', 'priority', 'summary'] } },
      });
      expect(model.requests[1]!.body.text).toMatchObject({ format: { schema: { required: ['label'] } } });
    });
    const { describeAgents } = await import('../../src/agents/describe-agents.js');
    const { ToolRegistry } = await import('../../src/tools/registry.js');
    const registry = new ToolRegistry([echoTool]);
    const versions = [triage, plain].map((agent) => describeAgents([agent], registry).get('triage')!.version);
    expect(versions[0]).not.toBe(versions[1]);
  });

  it('keel run --output-schema: the answer is checked and --json shows it as output; a bad file is a usage error', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'keel-output-schema-'));
    try {
      const schemaFile = path.join(directory, 'ticket.schema.json');
      await writeFile(schemaFile, JSON.stringify(z.toJSONSchema(Ticket, { io: 'output' })));
      await writeFile(path.join(directory, 'list.json'), '{"type": "array"}');
      await writeFile(path.join(directory, 'broken.json'), '{"type": ');
      await withScenario(server, [reply.text(JSON.stringify(ticket))], {}, async ({ taskQueue, model }) => {
        const environment = testServerCliEnvironment();
        const ran = await runCli(
          ['run', 'Triage it.', '--output-schema', schemaFile, '--json', '--task-queue', taskQueue],
          { env: environment },
        );
        expect(ran.code, ran.stderr).toBe(0);
        expect(JSON.parse(ran.stdout)).toMatchObject({
          kind: 'ended',
          result: { status: 'completed', output: ticket },
        });
        expect(model.requests[0]!.body.text).toMatchObject({ format: { type: 'json_schema' } });
        for (const [file, message] of [
          ['list.json', '--output-schema: type: Invalid input: expected "object"'],
          ['broken.json', 'broken.json is not JSON'],
          ['missing.json', '--output-schema: cannot read'],
        ] as const) {
          const refused = await runCli(
            [
              'run',
              'Triage it.',
              '--output-schema',
              path.join(directory, file),
              '--task-queue',
              `none-${randomUUID()}`,
            ],
            { env: environment },
          );
          expect(refused.code).toBe(2);
          expect(refused.stderr).toContain(message);
        }
      });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
