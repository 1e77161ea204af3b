import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_INSTRUCTIONS } from '../../src/contract/defaults.js';
import type { ModelInput } from '../../src/contract/model-request.js';
import type { Observation } from '../../src/contract/observation.js';
import { callResponses } from '../../src/model/call-responses.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { createSanitizer } from '../../src/safety/sanitize.js';
import { executeToolCall } from '../../src/tools/executor.js';
import { FileIdempotencyStore } from '../../src/tools/idempotency.js';
import { toResponsesTools } from '../../src/model/responses-tools.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { Workspace } from '../../src/tools/workspace.js';
import { silentLogger } from '../../test/support/loggers.js';
import { noopTool } from './noop-tool.js';

/** Runs an agent, returning its final text. */
export type PlainRun = (task: string, maxTurns: number) => Promise<string>;

/**
 * The agent loop with no Temporal: Keel's own model adapter (`callResponses`, foreground) and tool
 * executor, called in a plain `for` loop in this process. The floor a durable loop is measured against.
 */
export async function plainLoop(modelUrl: string, directory: string): Promise<PlainRun> {
  const openai = createOpenAIClient({ apiKey: 'sk-bench', baseURL: modelUrl });
  const registry = new ToolRegistry([noopTool]);
  const workspace = await Workspace.open(await mkdtemp(path.join(directory, 'plain-workspace-')));
  const dependencies = {
    registry,
    sanitizer: createSanitizer({ paths: [{ path: workspace.root, label: '.' }] }),
    logger: silentLogger,
    idempotencyStore: new FileIdempotencyStore(path.join(directory, 'plain-idempotency')),
  };
  const tools = toResponsesTools([noopTool]);
  return async (task, maxTurns) => {
    let input: ModelInput = { kind: 'task', task };
    for (let turn = 1; turn <= maxTurns; turn++) {
      const result = await callResponses(
        openai,
        {
          model: 'bench-model',
          instructions: DEFAULT_INSTRUCTIONS,
          turn,
          input,
          tools: ['noop'],
          parallelToolCalls: false,
        },
        tools,
      );
      if (result.toolCalls.length === 0) return result.text;
      const observations: Observation[] = [];
      for (const call of result.toolCalls) {
        observations.push(
          await executeToolCall(
            { call, allowedTools: ['noop'], idempotencyKey: `plain:${call.callId}`, outputCharLimit: 12_000 },
            dependencies,
          ),
        );
      }
      input = { kind: 'observations', previousResponseId: result.responseId, observations };
    }
    throw new Error(`the plain loop used all ${maxTurns} turns`);
  };
}
