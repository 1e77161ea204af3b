import { setTracingDisabled } from '@openai/agents-core';
import { OpenAIProvider } from '@openai/agents-openai';
import type { OpenAIProviderOptions } from '@openai/agents-openai';
import { OpenAIAgentsPlugin } from '@temporalio/openai-agents';
import { createOpenAIClient } from '../../src/model/client.js';

// The Agents SDK's tracing would export spans to OpenAI; the benchmark has no network and wants none.
setTracingDisabled(true);

/** The plugin as its README sets it up, with the model served by the benchmark's scripted server. */
export function agentsPlugin(modelUrl: string): OpenAIAgentsPlugin {
  return new OpenAIAgentsPlugin({
    modelProvider: new OpenAIProvider({
      // The same client Keel uses (no SDK retries); the package's CommonJS types name another copy of the class.
      openAIClient: createOpenAIClient({
        apiKey: 'sk-bench',
        baseURL: modelUrl,
      }) as unknown as OpenAIProviderOptions['openAIClient'],
      useResponses: true,
    }),
    // Keel's model activity timeout; the integration's retry defaults otherwise.
    modelParams: { startToCloseTimeout: '600s' },
  });
}
