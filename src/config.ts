import { homedir } from 'node:os';
import path from 'node:path';
import { ConfigError } from './config-error.js';
import { DEFAULT_HEARTBEAT_INTERVAL_SECONDS, DEFAULT_TASK_QUEUE } from './contract/defaults.js';
import { modelConfigFromEnvironment } from './model/config.js';
import type { ModelConfig } from './model/config.js';

/** Worker settings from the environment. Temporal connection settings come from `@temporalio/envconfig`. */
export interface WorkerConfig {
  /** `KEEL_TASK_QUEUE` (default `keel`). */
  taskQueue: string;
  /** `KEEL_WORKSPACE`: the directory tools may read (default: the current directory). */
  workspace: string;
  /** `KEEL_STATE_DIR`: where the worker keeps its own records, such as completed side effects. */
  stateDirectory: string;
  /** `KEEL_HEARTBEAT_INTERVAL_SECONDS`: most seconds between heartbeats sent; bounds cancel latency (default 2). */
  heartbeatIntervalSeconds: number;
  /** `KEEL_SHUTDOWN_GRACE_SECONDS`: how long in-flight activities may finish on SIGTERM (default 10). */
  shutdownGraceSeconds: number;
  model: ModelConfig;
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
  const shutdownGraceSeconds = seconds(environment, 'KEEL_SHUTDOWN_GRACE_SECONDS', 10, 0);
  const heartbeatIntervalSeconds = seconds(
    environment,
    'KEEL_HEARTBEAT_INTERVAL_SECONDS',
    DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
    0.1,
  );
  return {
    taskQueue: environment.KEEL_TASK_QUEUE?.trim() || DEFAULT_TASK_QUEUE,
    workspace: environment.KEEL_WORKSPACE?.trim() || process.cwd(),
    stateDirectory: environment.KEEL_STATE_DIR?.trim() || defaultStateDirectory(environment),
    shutdownGraceSeconds,
    heartbeatIntervalSeconds,
    model,
  };
}

/** A number of seconds from the environment: the default when unset or empty, an error when malformed. */
function seconds(environment: NodeJS.ProcessEnv, name: string, fallback: number, minimum: number): number {
  const raw = environment[name]?.trim() || String(fallback);
  const value = Number(raw);
  if (!Number.isFinite(value) || value < minimum) {
    throw new ConfigError(`${name} must be a number of seconds, not ${JSON.stringify(raw)}`);
  }
  return value;
}

/** `$XDG_STATE_HOME/keel`, else `~/.local/state/keel`: outside the workspace, where tools cannot reach it. */
export function defaultStateDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  const base = environment.XDG_STATE_HOME?.trim() || path.join(homedir(), '.local', 'state');
  return path.join(base, 'keel');
}

export { ConfigError };
