/**
 * The benchmark agent built with Temporal's own integration, `@temporalio/openai-agents`: the same
 * instructions, model and no-op tool as Keel's run, the model call and the tool each an activity.
 */
import { Agent } from '@openai/agents-core';
import { activityAsTool, TemporalOpenAIRunner } from '@temporalio/openai-agents/workflow';
import { DEFAULT_INSTRUCTIONS } from '../../src/contract/defaults.js';
import type { noop } from './activities.js';

/** Runs the agent on `task` for at most `maxTurns` model turns; returns its final text. */
export async function agentsBenchRun(task: string, maxTurns: number): Promise<string> {
  const tool = activityAsTool<typeof noop>(
    {
      name: 'noop',
      description: 'Does nothing; returns `size` characters.',
      parameters: {
        type: 'object',
        properties: { size: { type: 'integer', minimum: 0 } },
        required: ['size'],
        additionalProperties: false,
      },
    },
    // Keel's tool activity defaults: 60 s tool timeout plus 15 s grace, 5 attempts.
    { startToCloseTimeout: '75s', retryPolicy: { maximumAttempts: 5 } },
  );
  const agent = new Agent({
    name: 'bench',
    instructions: DEFAULT_INSTRUCTIONS,
    model: 'bench-model',
    tools: [tool],
  });
  const result = await new TemporalOpenAIRunner().run(agent, task, {
    maxTurns,
    runConfig: { tracingDisabled: true },
  });
  return String(result.finalOutput ?? '');
}
