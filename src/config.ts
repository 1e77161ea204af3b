import { homedir } from 'node:os';
import path from 'node:path';
import { ConfigError } from './config-error.js';
import {
  DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  DEFAULT_TASK_QUEUE,
  TOOL_NAME_PATTERN,
} from './contract/defaults.js';
import { z } from 'zod';
import { MaxOutputTokens, RunBudgets, RunLimits } from './contract/run-input.js';
import { ModelPrice } from './contract/usage.js';
import {
  flagOr,
  optionalInteger,
  optionalUrl,
  optionalChoice,
  optionalJson,
  optionalList,
  optionalNames,
  optionalNumber,
  optionalStringMap,
  optionalText,
  readEnvironment,
  secondsOr,
  textOr,
} from './env.js';
import type { Variable } from './env.js';
import { defaultConversation, modelConfigFromEnvironment } from './model/config.js';
import { optionalPostgresUrl, SCHEMA_NAME } from './postgres-url.js';
import type { ModelConfig } from './model/config.js';
import type { HttpFetchOptions } from './tools/builtin/http-fetch.js';
import type { RunCommandOptions } from './tools/builtin/run-command.js';
import type { CommandLimits } from './tools/builtin/run-command/limits.js';
import type { PostgresIdempotencyStoreOptions } from './tools/pg-idempotency-store.js';
import {
  DEFAULT_PAYLOAD_STORE_KEEP_HOURS,
  DEFAULT_PAYLOAD_STORE_THRESHOLD_BYTES,
  payloadStoreLocation,
} from './payload-store/payload-store-config.js';
import type { PayloadStoreConfig } from './payload-store/payload-store-config.js';
import { DEFAULT_WORKSPACE_PROTECT, protectPatternProblem } from './tools/workspace-protection.js';
import {
  DEFAULT_WORKSPACE_FAILOVER_SECONDS,
  DEFAULT_WORKSPACE_RETENTION_SECONDS,
  gitUrl,
  runWorkspacesConfig,
} from './run-workspaces-config.js';
import type { RunWorkspacesConfig } from './run-workspaces-config.js';
import { codecKeysFromEnvironment, codecVariables } from './codec/codec-config.js';
import type { KeyRing } from './codec/key-ring.js';
import { keelTelemetryVariables, telemetryConfigFromEnvironment } from './telemetry/telemetry-config.js';
import type { TelemetryConfig } from './telemetry/telemetry-config.js';

/** Worker settings from the environment. Temporal connection settings come from `@temporalio/envconfig`. */
export interface WorkerConfig {
  /** `KEEL_TASK_QUEUE` (default `keel`). */
  taskQueue: string;
  /** `KEEL_WORKSPACE`: the directory tools may read (default: the current directory). */
  workspace: string;
  /** `KEEL_STATE_DIR`: where the worker keeps its own records, such as completed side effects. */
  stateDirectory: string;
  /**
   * `KEEL_WORKSPACE_MODE=per-run`, `KEEL_WORKSPACES_DIR`, `KEEL_WORKSPACE_SEED_DIR`,
   * `KEEL_WORKSPACE_GIT_URL`, `KEEL_WORKSPACE_RETENTION_SECONDS`, `KEEL_WORKSPACES_SHARED`,
   * `KEEL_WORKSPACE_FAILOVER_SECONDS`: a workspace of its own for every run; undefined for the one
   * shared `workspace` (the default).
   */
  runWorkspaces: RunWorkspacesConfig | undefined;
  /** `KEEL_WORKSPACE_PROTECT`: what the tools may read but never write (default `.git,.keel`). */
  workspaceProtect: string[];
  /**
   * `KEEL_IDEMPOTENCY_STORE` (with `KEEL_IDEMPOTENCY_SCHEMA`, `KEEL_IDEMPOTENCY_TTL_HOURS`): side effects
   * remembered in PostgreSQL, shared by workers on several machines; in `stateDirectory` when absent.
   */
  idempotencyStore: PostgresIdempotencyStoreOptions | undefined;
  /**
   * `KEEL_PAYLOAD_STORE` (with `KEEL_PAYLOAD_STORE_THRESHOLD_BYTES`, `KEEL_PAYLOAD_STORE_SCHEMA`,
   * `KEEL_PAYLOAD_STORE_KEEP_HOURS`): large payloads kept in a directory or PostgreSQL, history holding
   * a reference; inline in history when absent.
   */
  payloadStore: PayloadStoreConfig | undefined;
  /** `KEEL_TOOLS`: the tools to offer, by name (default: all). */
  tools: string[] | undefined;
  /** `KEEL_TOOLS_MODULE` (or `keel worker --tools`): a module exporting the operator's own tools. */
  toolsModule: string | undefined;
  /** `KEEL_MAX_TURNS`, `KEEL_OBSERVATION_CHAR_LIMIT`, `KEEL_MODEL_TIMEOUT_SECONDS`, `KEEL_HEARTBEAT_TIMEOUT_SECONDS`: limits for runs that set none. */
  limits: Partial<RunLimits>;
  /** `KEEL_MAX_TOTAL_TOKENS`, `KEEL_MAX_DURATION_SECONDS`, `KEEL_MAX_COST_USD`: budgets for runs that set none. */
  budgets: Partial<RunBudgets>;
  /**
   * `KEEL_MAX_OUTPUT_TOKENS`: the most output tokens a turn may spend when its run sets none
   * (`maxOutputTokens`); `null` (`none`) leaves it to the model server.
   */
  maxOutputTokens: number | null;
  /** `KEEL_MODEL_PRICES`: US dollars per million tokens by model, for cost budgets and reports. */
  prices: Record<string, ModelPrice> | undefined;
  /**
   * `KEEL_CONVERSATION`: how runs that name none keep their conversation; unset, chained on the
   * OpenAI API and Azure OpenAI, stateless on other servers (see `defaultConversation`).
   */
  conversation: 'chained' | 'stateless';
  /**
   * `KEEL_MODEL_CONCURRENCY`, `KEEL_MODEL_TOKENS_PER_MINUTE`: the pacing of model calls, this worker's own;
   * with `KEEL_MODEL_PACING_STORE` (a postgres URL) shared by every worker of `KEEL_MODEL_PACING_POOL`
   * (default: the task queue) on that database.
   */
  modelPacing: { maxConcurrent?: number; tokensPerMinute?: number; store?: string; pool?: string };
  /**
   * `KEEL_RUN_COMMAND_*`: the `run_command` tool, when `KEEL_RUN_COMMAND_ALLOW` lists programs; sandboxed
   * by bubblewrap unless `KEEL_RUN_COMMAND_SANDBOX=off`.
   */
  runCommand: RunCommandOptions | undefined;
  /** `KEEL_HTTP_*`: the `http_fetch` tool, when `KEEL_HTTP_ALLOW_HOSTS` lists hosts. */
  httpFetch: HttpFetchOptions | undefined;
  /** `KEEL_HEARTBEAT_INTERVAL_SECONDS`: most seconds between heartbeats sent; bounds cancel latency (default 2). */
  heartbeatIntervalSeconds: number;
  /**
   * `KEEL_STREAM` (default on), `KEEL_STREAM_HOST`, `KEEL_STREAM_PORT`, `KEEL_STREAM_URL`: model turns
   * streamed live to subscribers, from where this worker serves them; `false` when off.
   */
  stream: false | { host?: string; port?: number; url?: string };
  /** `KEEL_SHUTDOWN_GRACE_SECONDS`: how long in-flight activities may finish on SIGTERM (default 10). */
  shutdownGraceSeconds: number;
  model: ModelConfig;
  /** `KEEL_CODEC_KEYS_FILE`, or `KEEL_CODEC_KEY` with `KEEL_CODEC_KEY_ID`: payloads encrypted with these keys; plain when absent. */
  codec: KeyRing | undefined;
  /** `OTEL_EXPORTER_OTLP_*`, `KEEL_OTEL_CAPTURE_CONTENT`, `KEEL_METRICS_PROMETHEUS`: tracing and metrics (off by default). */
  telemetry: TelemetryConfig;
}

/** A run limit or budget from the environment, bounded exactly as a run input bounds it. */
function limit(field: keyof RunLimits | keyof RunBudgets): Variable<number | undefined> {
  const schema =
    field in RunLimits.shape
      ? RunLimits.shape[field as keyof RunLimits]
      : RunBudgets.shape[field as keyof RunBudgets];
  return {
    parse(name, raw) {
      const value = raw?.trim() || undefined;
      if (value === undefined) return undefined;
      const parsed = schema.safeParse(Number(value));
      if (parsed.success) return parsed.data;
      const kind = schema.isInt ? 'a whole number' : 'a number';
      const unbounded = schema.maxValue === null || schema.maxValue >= Number.MAX_SAFE_INTEGER;
      const range = unbounded
        ? schema.minValue === 0
          ? 'above 0'
          : `of at least ${schema.minValue}`
        : `from ${schema.minValue} to ${schema.maxValue}`;
      throw new ConfigError(`${name} must be ${kind} ${range}, not ${JSON.stringify(value)}`);
    },
  };
}

/** `KEEL_MAX_OUTPUT_TOKENS`: a whole number bounded as a run's `maxOutputTokens`, `none` for no cap. */
const maxOutputTokens: Variable<number | null> = {
  parse(name, raw) {
    const value = raw?.trim() || undefined;
    if (value === undefined) return DEFAULT_MAX_OUTPUT_TOKENS;
    if (value.toLowerCase() === 'none') return null;
    const parsed = MaxOutputTokens.safeParse(Number(value));
    if (parsed.success) return parsed.data;
    throw new ConfigError(
      `${name} must be a whole number of at least 16 (output tokens a turn may spend) or none, not ${JSON.stringify(value)}`,
    );
  },
};

/** `KEEL_WORKSPACE_PROTECT`: comma-separated protection patterns, `none` for none, the defaults when unset. */
const workspaceProtect: Variable<string[]> = {
  parse(name, raw) {
    const value = raw?.trim() || undefined;
    if (value === undefined) return [...DEFAULT_WORKSPACE_PROTECT];
    const patterns = value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    if (patterns.length === 1 && patterns[0]!.toLowerCase() === 'none') return [];
    const expected =
      `${name} must be "none" or a comma-separated list of workspace-relative paths or globs ` +
      `(default "${DEFAULT_WORKSPACE_PROTECT.join(',')}")`;
    if (patterns.some((pattern) => pattern.toLowerCase() === 'none')) {
      throw new ConfigError(`${expected}; "none" cannot be combined with patterns`);
    }
    for (const pattern of patterns) {
      const problem = protectPatternProblem(pattern);
      if (problem !== undefined)
        throw new ConfigError(`${expected}, not ${JSON.stringify(value)}: ${problem}`);
    }
    return patterns;
  },
};

/** `KEEL_IDEMPOTENCY_SCHEMA`: a plain SQL identifier, optional. */
const schemaName: Variable<string | undefined> = {
  parse(name, raw) {
    const value = raw?.trim() || undefined;
    if (value === undefined || SCHEMA_NAME.test(value)) return value;
    throw new ConfigError(
      `${name} must be a schema name of letters, digits and _ (not starting with a digit), not ${JSON.stringify(value)}`,
    );
  },
};

/** Absolute host paths (one, or a comma-separated list), for the run_command sandbox's settings. */
function absolutePaths<Many extends boolean>(
  many: Many,
): Variable<(Many extends true ? string[] : string) | undefined> {
  return {
    parse(name, raw) {
      const value = raw?.trim() || undefined;
      if (value === undefined) return undefined;
      const entries = many
        ? value
            .split(',')
            .map((entry) => entry.trim())
            .filter(Boolean)
        : [value];
      const bad = entries.find((entry) => !path.isAbsolute(entry) || path.normalize(entry) === '/');
      if (bad !== undefined || entries.length === 0) {
        throw new ConfigError(
          `${name} must be ${many ? 'a comma-separated list of absolute paths' : 'an absolute path'}, not ${JSON.stringify(value)}`,
        );
      }
      const normalized = entries.map((entry) => path.normalize(entry));
      return (many ? normalized : normalized[0]) as Many extends true ? string[] : string;
    },
  };
}

/** Every `KEEL_*` worker variable (the model's are in `modelVariables`), with how to read each. */
export const workerVariables = {
  ...keelTelemetryVariables,
  KEEL_TASK_QUEUE: textOr(DEFAULT_TASK_QUEUE),
  KEEL_WORKSPACE: optionalText,
  KEEL_STATE_DIR: optionalText,
  // Per-run workspaces (src/run-workspaces-config.ts combines them).
  KEEL_WORKSPACE_MODE: optionalChoice(['shared', 'per-run']),
  KEEL_WORKSPACES_DIR: absolutePaths(false),
  KEEL_WORKSPACE_SEED_DIR: absolutePaths(false),
  KEEL_WORKSPACE_GIT_URL: gitUrl,
  KEEL_WORKSPACE_RETENTION_SECONDS: secondsOr(DEFAULT_WORKSPACE_RETENTION_SECONDS, 0),
  KEEL_WORKSPACES_SHARED: flagOr(false),
  KEEL_WORKSPACE_FAILOVER_SECONDS: secondsOr(DEFAULT_WORKSPACE_FAILOVER_SECONDS, 1),
  KEEL_WORKSPACE_PROTECT: workspaceProtect,
  KEEL_IDEMPOTENCY_STORE: optionalPostgresUrl,
  KEEL_IDEMPOTENCY_SCHEMA: schemaName,
  KEEL_IDEMPOTENCY_TTL_HOURS: optionalNumber(1, true),
  KEEL_PAYLOAD_STORE: payloadStoreLocation,
  KEEL_PAYLOAD_STORE_THRESHOLD_BYTES: optionalNumber(1024, true),
  KEEL_PAYLOAD_STORE_SCHEMA: schemaName,
  KEEL_PAYLOAD_STORE_KEEP_HOURS: optionalNumber(1),
  KEEL_TOOLS: optionalNames(TOOL_NAME_PATTERN),
  KEEL_TOOLS_MODULE: optionalText,
  KEEL_CONVERSATION: optionalChoice(['chained', 'stateless', 'auto']),
  KEEL_MAX_TURNS: limit('maxTurns'),
  KEEL_OBSERVATION_CHAR_LIMIT: limit('observationCharLimit'),
  KEEL_MODEL_TIMEOUT_SECONDS: limit('modelTimeoutSeconds'),
  KEEL_HEARTBEAT_TIMEOUT_SECONDS: limit('heartbeatTimeoutSeconds'),
  KEEL_HEARTBEAT_INTERVAL_SECONDS: secondsOr(DEFAULT_HEARTBEAT_INTERVAL_SECONDS, 0.1),
  KEEL_MAX_OUTPUT_TOKENS: maxOutputTokens,
  KEEL_MAX_TOTAL_TOKENS: limit('maxTotalTokens'),
  KEEL_MAX_DURATION_SECONDS: limit('maxDurationSeconds'),
  KEEL_MAX_COST_USD: limit('maxCostUsd'),
  KEEL_MODEL_PRICES: optionalJson(
    z.record(z.string().min(1), ModelPrice),
    '{"gpt-5":{"input":1.25,"cachedInput":0.125,"output":10}} (US dollars per million tokens)',
  ),
  KEEL_MODEL_CONCURRENCY: optionalNumber(1, true),
  KEEL_MODEL_TOKENS_PER_MINUTE: optionalNumber(1, true),
  KEEL_MODEL_PACING_STORE: optionalPostgresUrl,
  KEEL_MODEL_PACING_POOL: optionalText,
  KEEL_RUN_COMMAND_ALLOW: optionalList,
  KEEL_RUN_COMMAND_TIMEOUT_SECONDS: optionalNumber(1),
  KEEL_RUN_COMMAND_OUTPUT_CHARS: optionalNumber(100, true),
  KEEL_RUN_COMMAND_ENV: optionalStringMap,
  KEEL_RUN_COMMAND_SANDBOX: optionalChoice(['bwrap', 'off']),
  KEEL_RUN_COMMAND_BWRAP: absolutePaths(false),
  KEEL_RUN_COMMAND_NETWORK: flagOr(false),
  KEEL_RUN_COMMAND_READ_ONLY_PATHS: absolutePaths(true),
  KEEL_RUN_COMMAND_MEMORY_MB: optionalNumber(16, true),
  KEEL_RUN_COMMAND_PROCESSES: optionalNumber(8, true),
  KEEL_RUN_COMMAND_CPU_SECONDS: optionalNumber(1, true),
  KEEL_RUN_COMMAND_FILE_MB: optionalNumber(1, true),
  KEEL_RUN_COMMAND_TMP_MB: optionalNumber(1, true),
  KEEL_RUN_COMMAND_WORKSPACE_MB: optionalNumber(1, true),
  KEEL_HTTP_ALLOW_HOSTS: optionalList,
  KEEL_HTTP_ALLOW_PRIVATE: flagOr(false),
  KEEL_HTTP_ALLOW_POST: flagOr(false),
  KEEL_HTTP_TIMEOUT_SECONDS: optionalNumber(1),
  KEEL_HTTP_MAX_RESPONSE_BYTES: optionalNumber(1024, true),
  KEEL_HTTP_MAX_REDIRECTS: optionalNumber(0, true),
  KEEL_SHUTDOWN_GRACE_SECONDS: secondsOr(10, 0),
  KEEL_STREAM: flagOr(true),
  KEEL_STREAM_HOST: optionalText,
  KEEL_STREAM_PORT: optionalInteger(0, 65_535),
  KEEL_STREAM_URL: optionalUrl,
  ...codecVariables,
};

/** `KEEL_TASK_QUEUE`, else `keel`: the queue workers poll and clients start runs on. */
export function taskQueueFromEnvironment(environment: NodeJS.ProcessEnv = process.env): string {
  return workerVariables.KEEL_TASK_QUEUE.parse('KEEL_TASK_QUEUE', environment.KEEL_TASK_QUEUE);
}

/** `KEEL_WORKSPACE_PROTECT`, else `.git,.keel`: for a worker without the rest of the configuration (the demo). */
export function workspaceProtectFromEnvironment(environment: NodeJS.ProcessEnv = process.env): string[] {
  return workerVariables.KEEL_WORKSPACE_PROTECT.parse(
    'KEEL_WORKSPACE_PROTECT',
    environment.KEEL_WORKSPACE_PROTECT,
  );
}

/** The payload store settings alone: for clients, which must read what workers stored outside history. */
export function payloadStoreFromEnvironment(
  environment: NodeJS.ProcessEnv = process.env,
): PayloadStoreConfig | undefined {
  const names = [
    'KEEL_PAYLOAD_STORE',
    'KEEL_PAYLOAD_STORE_THRESHOLD_BYTES',
    'KEEL_PAYLOAD_STORE_SCHEMA',
    'KEEL_PAYLOAD_STORE_KEEP_HOURS',
  ] as const;
  const values = readEnvironment(
    Object.fromEntries(names.map((name) => [name, workerVariables[name]])) as Pick<
      typeof workerVariables,
      (typeof names)[number]
    >,
    environment,
  );
  const location = values.KEEL_PAYLOAD_STORE;
  if (location === undefined) {
    const stray = names.slice(1).find((name) => values[name] !== undefined);
    if (stray !== undefined)
      throw new ConfigError(`${stray} applies to a payload store: set KEEL_PAYLOAD_STORE too`);
    return undefined;
  }
  if (location.kind === 'directory' && values.KEEL_PAYLOAD_STORE_SCHEMA !== undefined) {
    throw new ConfigError(
      'KEEL_PAYLOAD_STORE_SCHEMA applies to a postgres:// payload store, not a directory',
    );
  }
  return {
    location,
    thresholdBytes: values.KEEL_PAYLOAD_STORE_THRESHOLD_BYTES ?? DEFAULT_PAYLOAD_STORE_THRESHOLD_BYTES,
    ...defined('schema', values.KEEL_PAYLOAD_STORE_SCHEMA),
    keepHours: values.KEEL_PAYLOAD_STORE_KEEP_HOURS ?? DEFAULT_PAYLOAD_STORE_KEEP_HOURS,
  };
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
  const values = readEnvironment(workerVariables, environment);
  const limits: Partial<RunLimits> = {};
  if (values.KEEL_MAX_TURNS !== undefined) limits.maxTurns = values.KEEL_MAX_TURNS;
  if (values.KEEL_OBSERVATION_CHAR_LIMIT !== undefined)
    limits.observationCharLimit = values.KEEL_OBSERVATION_CHAR_LIMIT;
  if (values.KEEL_MODEL_TIMEOUT_SECONDS !== undefined)
    limits.modelTimeoutSeconds = values.KEEL_MODEL_TIMEOUT_SECONDS;
  if (values.KEEL_HEARTBEAT_TIMEOUT_SECONDS !== undefined) {
    limits.heartbeatTimeoutSeconds = values.KEEL_HEARTBEAT_TIMEOUT_SECONDS;
  }
  if (
    values.KEEL_IDEMPOTENCY_STORE === undefined &&
    (values.KEEL_IDEMPOTENCY_SCHEMA !== undefined || values.KEEL_IDEMPOTENCY_TTL_HOURS !== undefined)
  ) {
    throw new ConfigError(
      'KEEL_IDEMPOTENCY_SCHEMA and KEEL_IDEMPOTENCY_TTL_HOURS apply to a PostgreSQL store: set KEEL_IDEMPOTENCY_STORE ' +
        '(records in KEEL_STATE_DIR do not expire)',
    );
  }
  const budgets: Partial<RunBudgets> = {
    ...defined('maxTotalTokens', values.KEEL_MAX_TOTAL_TOKENS),
    ...defined('maxDurationSeconds', values.KEEL_MAX_DURATION_SECONDS),
    ...defined('maxCostUsd', values.KEEL_MAX_COST_USD),
  };
  return {
    taskQueue: values.KEEL_TASK_QUEUE,
    budgets,
    maxOutputTokens: values.KEEL_MAX_OUTPUT_TOKENS,
    prices: values.KEEL_MODEL_PRICES,
    conversation:
      values.KEEL_CONVERSATION === undefined || values.KEEL_CONVERSATION === 'auto'
        ? defaultConversation(model.baseURL)
        : values.KEEL_CONVERSATION,
    modelPacing: {
      ...defined('maxConcurrent', values.KEEL_MODEL_CONCURRENCY),
      ...defined('tokensPerMinute', values.KEEL_MODEL_TOKENS_PER_MINUTE),
      ...(values.KEEL_MODEL_PACING_STORE === undefined
        ? {}
        : {
            store: values.KEEL_MODEL_PACING_STORE,
            pool: values.KEEL_MODEL_PACING_POOL ?? values.KEEL_TASK_QUEUE,
          }),
    },
    workspace: values.KEEL_WORKSPACE ?? process.cwd(),
    runWorkspaces: runWorkspacesConfig(values),
    stateDirectory: values.KEEL_STATE_DIR ?? defaultStateDirectory(environment),
    workspaceProtect: values.KEEL_WORKSPACE_PROTECT,
    idempotencyStore:
      values.KEEL_IDEMPOTENCY_STORE === undefined
        ? undefined
        : {
            url: values.KEEL_IDEMPOTENCY_STORE,
            // Unset: the store's own defaults (schema `keel`, 7 days).
            ...defined('schema', values.KEEL_IDEMPOTENCY_SCHEMA),
            ...defined(
              'ttlMs',
              values.KEEL_IDEMPOTENCY_TTL_HOURS === undefined
                ? undefined
                : values.KEEL_IDEMPOTENCY_TTL_HOURS * 3_600_000,
            ),
          },
    payloadStore: payloadStoreFromEnvironment(environment),
    tools: values.KEEL_TOOLS,
    toolsModule: values.KEEL_TOOLS_MODULE,
    limits,
    heartbeatIntervalSeconds: values.KEEL_HEARTBEAT_INTERVAL_SECONDS,
    runCommand:
      values.KEEL_RUN_COMMAND_ALLOW === undefined
        ? undefined
        : {
            allow: values.KEEL_RUN_COMMAND_ALLOW,
            ...defined('timeoutSeconds', values.KEEL_RUN_COMMAND_TIMEOUT_SECONDS),
            ...defined('outputCharLimit', values.KEEL_RUN_COMMAND_OUTPUT_CHARS),
            ...defined('environment', values.KEEL_RUN_COMMAND_ENV),
            ...defined('sandbox', values.KEEL_RUN_COMMAND_SANDBOX),
            ...defined('bwrapPath', values.KEEL_RUN_COMMAND_BWRAP),
            ...(values.KEEL_RUN_COMMAND_NETWORK ? { network: true } : {}),
            ...defined('readOnlyPaths', values.KEEL_RUN_COMMAND_READ_ONLY_PATHS),
            ...definedLimits({
              ...defined('memoryMb', values.KEEL_RUN_COMMAND_MEMORY_MB),
              ...defined('processes', values.KEEL_RUN_COMMAND_PROCESSES),
              ...defined('cpuSeconds', values.KEEL_RUN_COMMAND_CPU_SECONDS),
              ...defined('fileMb', values.KEEL_RUN_COMMAND_FILE_MB),
              ...defined('tmpMb', values.KEEL_RUN_COMMAND_TMP_MB),
              ...defined('workspaceMb', values.KEEL_RUN_COMMAND_WORKSPACE_MB),
            }),
          },
    httpFetch:
      values.KEEL_HTTP_ALLOW_HOSTS === undefined
        ? undefined
        : {
            allowHosts: values.KEEL_HTTP_ALLOW_HOSTS,
            allowPrivateAddresses: values.KEEL_HTTP_ALLOW_PRIVATE,
            allowPost: values.KEEL_HTTP_ALLOW_POST,
            ...defined('timeoutSeconds', values.KEEL_HTTP_TIMEOUT_SECONDS),
            ...defined('maxResponseBytes', values.KEEL_HTTP_MAX_RESPONSE_BYTES),
            ...defined('maxRedirects', values.KEEL_HTTP_MAX_REDIRECTS),
          },
    shutdownGraceSeconds: values.KEEL_SHUTDOWN_GRACE_SECONDS,
    stream: values.KEEL_STREAM && {
      ...defined('host', values.KEEL_STREAM_HOST),
      ...defined('port', values.KEEL_STREAM_PORT),
      ...defined('url', values.KEEL_STREAM_URL),
    },
    model,
    codec: codecKeysFromEnvironment(environment),
    telemetry: telemetryConfigFromEnvironment(environment),
  };
}

/** `{ [key]: value }` when the value is set, else nothing: for optional fields. */
function defined<Key extends string, Value>(key: Key, value: Value | undefined): { [K in Key]?: Value } {
  return value === undefined ? {} : ({ [key]: value } as { [K in Key]?: Value });
}

/** `$XDG_STATE_HOME/keel`, else `~/.local/state/keel`: outside the workspace, where tools cannot reach it. */
export function defaultStateDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  const base = environment.XDG_STATE_HOME?.trim() || path.join(homedir(), '.local', 'state');
  return path.join(base, 'keel');
}

export { ConfigError };

/** `{ limits }` when the operator set any of run_command's limits, else nothing. */
function definedLimits(limits: Partial<CommandLimits>): { limits?: Partial<CommandLimits> } {
  return Object.keys(limits).length === 0 ? {} : { limits };
}
