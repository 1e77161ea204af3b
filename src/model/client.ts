import OpenAI from 'openai';
import type { ModelConfig } from './config.js';

/** The key given to the SDK when none is configured: the SDK refuses to start without one. */
export const API_KEY_PLACEHOLDER = 'not-set';

/**
 * The `openai` client Keel uses. `maxRetries: 0` because Temporal owns retries: an SDK retry inside an
 * activity attempt would multiply attempts and hide failures from history.
 */
export function createOpenAIClient(config: Pick<ModelConfig, 'apiKey' | 'baseURL'>): OpenAI {
  return new OpenAI({
    // Servers that need no key accept any placeholder.
    apiKey: config.apiKey ?? API_KEY_PLACEHOLDER,
    baseURL: config.baseURL,
    maxRetries: 0,
  });
}
