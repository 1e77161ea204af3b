import { ConfigError } from '../config-error.js';

/**
 * How a model turn is requested. `background` creates the response with `background: true` and polls
 * it, so a retried attempt re-attaches instead of paying for a second generation and a cancelled run
 * cancels the generation on the server. `foreground` is one plain request, for Responses-compatible
 * servers without background mode.
 */
export type ModelMode = 'background' | 'foreground';

/** How the worker reaches the model. Read from the environment; never part of a run's input or history. */
export interface ModelConfig {
  /** `OPENAI_API_KEY`. Optional only because some Responses-compatible servers need none. */
  apiKey: string | undefined;
  /** `OPENAI_BASE_URL`: any Responses-compatible server. The OpenAI API when absent. */
  baseURL: string | undefined;
  /** `KEEL_MODEL`: model used when a run names none. */
  defaultModel: string;
  /** `KEEL_MODEL_MODE`: `background` for the OpenAI API, `foreground` for other servers, unless set. */
  mode: ModelMode;
}

/** Model used when neither the run nor `KEEL_MODEL` names one. */
export const FALLBACK_MODEL = 'gpt-5-mini';

/** Reads {@link ModelConfig} from environment variables. */
export function modelConfigFromEnvironment(environment: NodeJS.ProcessEnv = process.env): ModelConfig {
  const baseURL = nonEmpty(environment.OPENAI_BASE_URL);
  const mode = nonEmpty(environment.KEEL_MODEL_MODE) ?? (baseURL === undefined ? 'background' : 'foreground');
  if (mode !== 'background' && mode !== 'foreground') {
    throw new ConfigError(
      `KEEL_MODEL_MODE must be "background" or "foreground", not ${JSON.stringify(mode)}`,
    );
  }
  return {
    apiKey: nonEmpty(environment.OPENAI_API_KEY),
    baseURL,
    defaultModel: nonEmpty(environment.KEEL_MODEL) ?? FALLBACK_MODEL,
    mode,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
