import OpenAI from 'openai';
import type { ModelConfig } from './config.js';

/**
 * The `openai` client Keel uses. `maxRetries: 0` because Temporal owns retries: an SDK retry inside an
 * activity attempt would multiply attempts and hide failures from history.
 */
export function createOpenAIClient(config: Pick<ModelConfig, 'apiKey' | 'baseURL'>): OpenAI {
  return new OpenAI({
    // The SDK refuses to start without a key; servers that need none accept any placeholder.
    apiKey: config.apiKey ?? 'not-set',
    baseURL: config.baseURL,
    maxRetries: 0,
  });
}
