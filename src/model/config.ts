/** How the worker reaches the model. Read from the environment; never part of a run's input or history. */
export interface ModelConfig {
  /** `OPENAI_API_KEY`. Optional only because some Responses-compatible servers need none. */
  apiKey: string | undefined;
  /** `OPENAI_BASE_URL`: any Responses-compatible server. The OpenAI API when absent. */
  baseURL: string | undefined;
  /** `KEEL_MODEL`: model used when a run names none. */
  defaultModel: string;
}

/** Model used when neither the run nor `KEEL_MODEL` names one. */
export const FALLBACK_MODEL = 'gpt-5-mini';

/** Reads {@link ModelConfig} from environment variables. */
export function modelConfigFromEnvironment(environment: NodeJS.ProcessEnv = process.env): ModelConfig {
  return {
    apiKey: nonEmpty(environment.OPENAI_API_KEY),
    baseURL: nonEmpty(environment.OPENAI_BASE_URL),
    defaultModel: nonEmpty(environment.KEEL_MODEL) ?? FALLBACK_MODEL,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
