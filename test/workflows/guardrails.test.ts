import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAgent } from '../../src/agents/define-agent.js';
import { describeAgents } from '../../src/agents/describe-agents.js';
import type { TextGuardrail, ToolCallGuardrail } from '../../src/agents/guardrails.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Masks e-mail addresses; trips on a task that asks to drop tables. */
const inputChecks: TextGuardrail[] = [
  {
    name: 'no-sql',
    check: (text) =>
      /drop table/i.test(text) ? { action: 'trip', reason: 'asks for SQL' } : { action: 'pass' },
  },
  {
    name: 'mask-email',
    check: (text) =>
      /@/.test(text) ? { action: 'rewrite', text: text.replace(/\S+@\S+/g, '[email]') } : { action: 'pass' },
  },
];
/** Masks card numbers in the answer; trips on an answer that promises a refund; one check throws. */
const outputChecks: TextGuardrail[] = [
  {
    name: 'no-refund-promise',
    check: (text) =>
      /refund guaranteed/i.test(text) ? { action: 'trip', reason: 'promises a refund' } : { action: 'pass' },
  },
  {
    name: 'mask-cards',
    check: (text) => ({ action: 'rewrite', text: text.replace(/\d{4}( ?\d{4}){3}/g, '[card]') }),
  },
  {
    name: 'flaky',
    check: (text) => {
      if (text.includes('boom')) throw new Error('the check service is down');
      // An answer a check may not give: it trips, as a throw does.
      if (text.includes('odd')) return { action: 'deny', reason: 'no' } as never;
      return { action: 'pass' };
    },
  },
];
const toolChecks: ToolCallGuardrail[] = [
  {
    name: 'no-prod',
    check: (call) =>
      call.name === 'deploy' && (call.arguments as { environment?: string }).environment === 'prod'
        ? { action: 'deny', reason: 'deploys to prod need a change ticket' }
        : { action: 'allow' },
  },
];
const support = defineAgent({
  name: 'support',
  instructions: 'You answer support tickets.',
  guardrails: { input: inputChecks, output: outputChecks, toolCalls: toolChecks },
});

describe('guardrails: checks of an agent’s task, answer and tool calls, run on the worker', () => {
  it('rewrites the task and the answer, and denies a call with a reason the model sees', async () => {
    const deployments: string[] = [];
    const deploy = defineTool({
      name: 'deploy',
      description: 'Deploy to an environment.',
      schema: z.object({ environment: z.string() }),
      execute: ({ environment }) => {
        deployments.push(environment);
        return `deployed to ${environment}`;
      },
    });
    const steps = [
      reply.calls(
        { name: 'deploy', arguments: { environment: 'prod' }, callId: 'call_prod' },
        { name: 'deploy', arguments: { environment: 'staging' }, callId: 'call_staging' },
      ),
      reply.text('Your card 4111 1111 1111 1111 is fine; staging is deployed.'),
    ];
    await withScenario(
      server,
      steps,
      { agents: [support], tools: [echoTool, deploy] },
      async ({ run, model }) => {
        const { result } = await run({
          agent: 'support',
          task: 'Ticket from ada@example.com: deploy please.',
        });
        expect(result).toMatchObject({
          status: 'completed',
          finalText: 'Your card [card] is fine; staging is deployed.',
        });
        expect(model.requests[0]!.body.input).toEqual([
          { type: 'message', role: 'user', content: 'Ticket from [email] deploy please.' },
        ]);
        const outputs = (model.requests[1]!.body.input as { call_id?: string; output?: string }[]).filter(
          (item) => item.call_id !== undefined,
        );
        expect(JSON.parse(outputs[0]!.output!)).toMatchObject({
          error: 'rejected',
          message: expect.stringContaining(
            'The guardrail no-prod denied this call, so it was not run: deploys to prod need a change ticket',
          ) as unknown,
        });
        expect(deployments).toEqual(['staging']);
      },
    );
  });

  it.each([
    ['the input', 'Please DROP TABLE users.', [], 'The input guardrail no-sql stopped the run: asks for SQL'],
    [
      'the output',
      'Refund?',
      [reply.text('Refund guaranteed!')],
      'The output guardrail no-refund-promise stopped the run: promises a refund',
    ],
    [
      'a check that throws',
      'Go.',
      [reply.text('boom')],
      'The output guardrail flaky stopped the run: the check failed',
    ],
    [
      'a check that answers something else',
      'Go.',
      [reply.text('odd')],
      'The output guardrail flaky stopped the run: the check failed',
    ],
  ])(
    'trips the run on %s: failed with KeelError.GuardrailTripped and the reason',
    async (_, task, steps, reason) => {
      await withScenario(server, steps, { agents: [support] }, async ({ run, model }) => {
        const { result } = await run({ agent: 'support', task });
        expect(result).toMatchObject({ status: 'failed', errorType: 'KeelError.GuardrailTripped', reason });
        expect(model.requests).toHaveLength(steps.length);
      });
    },
  );

  it('names the guardrails in the agent’s version and refuses a guardrail without a check', () => {
    const registry = new ToolRegistry([echoTool]);
    const plain = defineAgent({ name: 'support', instructions: 'You answer support tickets.' });
    const versions = [plain, support].map(
      (agent) => describeAgents([agent], registry).get('support')!.version,
    );
    expect(versions[0]).not.toBe(versions[1]);
    expect(describeAgents([support], registry).get('support')!.guardrails).toEqual({
      input: ['no-sql', 'mask-email'],
      output: ['no-refund-promise', 'mask-cards', 'flaky'],
      toolCalls: ['no-prod'],
    });
    expect(() =>
      defineAgent({ name: 'bad', instructions: 'x', guardrails: { input: [{ name: 'x' } as never] } }),
    ).toThrow('guardrails.input[0]: must be { name, check }');
  });
});
