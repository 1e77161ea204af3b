import { optionalChoice, optionalText, optionalUrl, readEnvironment, textOr } from '../env.js';

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

/**
 * How a run that names no conversation mode keeps it when `KEEL_CONVERSATION` is unset: chained
 * (the server keeps it) on the OpenAI API and Azure OpenAI, which keep responses; stateless (the run
 * keeps it and sends it whole) on any other server, since many keep none (LiteLLM without a
 * database, Ollama, llama.cpp's server) and every server takes a whole conversation.
 */
export function defaultConversation(baseURL: string | undefined): 'chained' | 'stateless' {
  if (baseURL === undefined) return 'chained';
  const host = new URL(baseURL).hostname.toLowerCase();
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com') ? 'chained' : 'stateless';
}

/** Model used when neither the run nor `KEEL_MODEL` names one. */
export const FALLBACK_MODEL = 'gpt-5-mini';

/** The model settings among the environment variables, with how to read each. */
export const modelVariables = {
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: optionalUrl,
  KEEL_MODEL: textOr(FALLBACK_MODEL),
  KEEL_MODEL_MODE: optionalChoice(['background', 'foreground']),
};

/** Reads {@link ModelConfig} from environment variables. */
export function modelConfigFromEnvironment(environment: NodeJS.ProcessEnv = process.env): ModelConfig {
  const values = readEnvironment(modelVariables, environment);
  return {
    apiKey: values.OPENAI_API_KEY,
    baseURL: values.OPENAI_BASE_URL,
    defaultModel: values.KEEL_MODEL,
    mode: values.KEEL_MODEL_MODE ?? (values.OPENAI_BASE_URL === undefined ? 'background' : 'foreground'),
  };
}
