/**
 * What-if loops for the per-step benchmark: Keel's own activities driven by the smallest possible
 * workflow, to measure how much of a step is Keel's workflow code and how much a local activity for
 * the tool would save. Benchmark code only; the production loop is `src/workflows/agent-run.ts`.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { KeelActivities } from '../../src/activities/create-activities.js';
import { DEFAULT_INSTRUCTIONS } from '../../src/contract/defaults.js';
import type { ModelInput } from '../../src/contract/model-request.js';
import type { ModelTurn } from '../../src/contract/model-turn.js';
import type { Observation } from '../../src/contract/observation.js';

/** Input of {@link whatIfLoop}. */
export interface WhatIfInput {
  task: string;
  maxTurns: number;
  /** Run the tool as a local activity: no activity task, and no workflow task of its own. */
  localTool: boolean;
}

/** Model turn → tool call → model turn, with none of the run's state, progress details or search attributes. */
export async function whatIfLoop(input: WhatIfInput): Promise<string> {
  const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumAttempts: 5 };
  const model = proxyActivities<KeelActivities>({
    startToCloseTimeout: '600s',
    heartbeatTimeout: '5s',
    retry,
  });
  const tools = input.localTool
    ? proxyLocalActivities<KeelActivities>({ startToCloseTimeout: '75s', retry })
    : proxyActivities<KeelActivities>({ startToCloseTimeout: '75s', heartbeatTimeout: '5s', retry });
  let modelInput: ModelInput = { kind: 'task', task: input.task };
  for (let turn = 1; turn <= input.maxTurns; turn++) {
    const result: ModelTurn = await model.callModel({
      model: 'bench-model',
      instructions: DEFAULT_INSTRUCTIONS,
      turn,
      input: modelInput,
      tools: ['noop'],
      parallelToolCalls: false,
    });
    if (result.toolCalls.length === 0) return result.text;
    const observations: Observation[] = [];
    for (const call of result.toolCalls) {
      const outcome = await tools.executeTool({ call, allowedTools: ['noop'], outputCharLimit: 12_000 });
      observations.push(outcome as Observation);
    }
    modelInput = { kind: 'observations', previousResponseId: result.responseId, observations };
  }
  return 'max turns';
}
