import { DEFAULT_TASK_QUEUE } from './contract/defaults.js';
import { modelConfigFromEnvironment } from './model/config.js';
import type { ModelConfig } from './model/config.js';

/** Worker settings from the environment. Temporal connection settings come from `@temporalio/envconfig`. */
export interface WorkerConfig {
  /** `KEEL_TASK_QUEUE` (default `keel`). */
  taskQueue: string;
  /** `KEEL_WORKSPACE`: the directory tools may read (default: the current directory). */
  workspace: string;
  /** `KEEL_SHUTDOWN_GRACE_SECONDS`: how long in-flight activities may finish on SIGTERM (default 10). */
  shutdownGraceSeconds: number;
  model: ModelConfig;
}

/** A setting is missing or malformed; the message says which and how to fix it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and checks {@link WorkerConfig}. */
export function workerConfigFromEnvironment(environment: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const model = modelConfigFromEnvironment(environment);
  if (model.apiKey === undefined && model.baseURL === undefined) {
    throw new ConfigError(
      'No model is configured: set OPENAI_API_KEY (for the OpenAI API), or OPENAI_BASE_URL ' +
        '(for another Responses-compatible server, with OPENAI_API_KEY if it needs one).',
    );
  }
  const grace = environment.KEEL_SHUTDOWN_GRACE_SECONDS?.trim() || '10';
  const shutdownGraceSeconds = Number(grace);
  if (!Number.isFinite(shutdownGraceSeconds) || shutdownGraceSeconds < 0) {
    throw new ConfigError(
      `KEEL_SHUTDOWN_GRACE_SECONDS must be a number of seconds, not ${JSON.stringify(grace)}`,
    );
  }
  return {
    taskQueue: environment.KEEL_TASK_QUEUE?.trim() || DEFAULT_TASK_QUEUE,
    workspace: environment.KEEL_WORKSPACE?.trim() || process.cwd(),
    shutdownGraceSeconds,
    model,
  };
}
