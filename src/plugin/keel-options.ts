import type OpenAI from 'openai';
import { z } from 'zod';
import { AgentDefinition } from '../agents/agent-definition.js';
import { ConversationMode, MaxOutputTokens, RunBudgets, RunLimits } from '../contract/run-input.js';
import { ModelPrice } from '../contract/usage.js';
import type { Logger } from '../logger.js';
import { McpServerList } from '../mcp/server-config.js';
import type { Tool } from '../tools/define-tool.js';
import type { IdempotencyStore } from '../tools/idempotency.js';
import type { Workspace } from '../tools/workspace.js';
import { gitUrlProblem } from '../tools/run-workspace-seed.js';

/** An object with the given methods: for the parts of the options that are code, not data. */
function hasMethods<T>(what: string, ...methods: string[]) {
  return z.custom<T>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      methods.every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
    `expected ${what}`,
  );
}

/** A tool made by `defineTool` (or any object with the `Tool` shape). */
export const ToolValue = hasMethods<Tool>(
  'a tool made by defineTool',
  'parseArguments',
  'execute',
  'needsApproval',
);

/**
 * Everything Keel needs on a worker, in one place: `KeelPlugin`, `createKeelWorker`, `keel worker` and
 * the tests all take these options, so a setting is declared, checked and documented once.
 */
export const KeelOptions = z.strictObject({
  /** The `openai` client for model turns. Keel turns its own retries off: Temporal retries a turn. */
  openai: z.custom<OpenAI>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as Partial<OpenAI>).responses?.create === 'function',
    'expected an OpenAI client: new OpenAI({ apiKey, baseURL })',
  ),
  /** The model a run uses when neither it nor its agent names one. */
  defaultModel: z.string().trim().min(1),
  /** `background` (the default) re-attaches a retried turn to its response instead of paying twice. */
  modelMode: z.enum(['background', 'foreground']).default('background'),
  /**
   * Live streaming of model turns to subscribers, out of history (see docs/contract.md): `false`
   * turns it off (the model is asked for whole answers); else where the worker serves it, on
   * loopback and any free port by default. A subscriber on another machine needs `host` it can
   * reach (`0.0.0.0`) and, behind a proxy or NAT, the `url` it reaches.
   */
  stream: z
    .union([
      z.literal(false),
      z
        .object({
          host: z.string().min(1).optional(),
          port: z.number().int().min(0).max(65_535).optional(),
          url: z.string().url().optional(),
        })
        .strict(),
    ])
    .default({}),
  /** How often a background response is polled; the default suits real models. */
  pollSchedule: z
    .object({ initialMs: z.number().positive(), maxMs: z.number().positive() })
    .refine((schedule) => schedule.maxMs >= schedule.initialMs, 'maxMs must be at least initialMs')
    .optional(),
  /**
   * The tools to offer: a list, or a function of the worker's opened `workspace` (to bind
   * `fileTools(workspace)` and `run_command` to it). Absent: the file tools of `workspace`, when one
   * is given, else none.
   */
  tools: z
    .union([
      z.array(ToolValue).readonly(),
      z.custom<(workspace: Workspace) => readonly Tool[]>(
        (value) => typeof value === 'function',
        'expected a list of tools or a function of the workspace',
      ),
    ])
    .optional(),
  /**
   * Named agents runs may ask for (`{ agent: "triage", task }`): instructions, model, tools,
   * approvals, limits and budgets a caller need not know. Made with `defineAgent`, or plain data.
   */
  agents: z.array(AgentDefinition).readonly().optional(),
  /**
   * MCP servers whose tools the worker offers, as `<server>__<tool>`: stdio (`command`) or Streamable
   * HTTP (`url`), each with its own `allowTools`, `needsApproval` and `timeoutSeconds` (docs/mcp.md).
   */
  mcpServers: McpServerList.optional(),
  /** Names of the tools to enable (`KEEL_TOOLS`): all of `tools` when absent. */
  enabledTools: z.array(z.string()).readonly().optional(),
  /** The directory the built-in file tools work in, and which Keel's own records must stay out of. */
  workspace: z.string().min(1).optional(),
  /**
   * One workspace per run (`KEEL_WORKSPACE_MODE=per-run`) instead of the one `workspace` all runs share:
   * `<root>/<workflow id, made safe>`, made on the run's first tool call from `seed`, kept across a
   * session's messages and continue-as-new, and removed once its run has ended and it went unused for
   * `retentionSeconds`. A `tools` function is then called once per run, with that run's workspace.
   */
  runWorkspaces: z
    .strictObject({
      /** The directory holding the runs' workspaces (`KEEL_WORKSPACES_DIR`); created when missing. */
      root: z.string().min(1),
      /** What a new workspace starts as: empty (the default), a copy of a directory, or a git clone. */
      seed: z
        .discriminatedUnion('kind', [
          z.strictObject({ kind: z.literal('empty') }),
          z.strictObject({ kind: z.literal('directory'), path: z.string().min(1) }),
          z.strictObject({
            kind: z.literal('git'),
            url: z.string().superRefine((url, context) => {
              const problem = gitUrlProblem(url);
              if (problem !== undefined)
                context.addIssue({ code: 'custom', message: `the git URL: ${problem}` });
            }),
          }),
        ])
        .default({ kind: 'empty' }),
      /** How long an ended run's workspace is kept after its last use (`KEEL_WORKSPACE_RETENTION_SECONDS`). */
      retentionSeconds: z.number().nonnegative().default(86_400),
      /** How often the worker looks for workspaces to remove, besides once at start. */
      sweepIntervalSeconds: z.number().positive().default(600),
      /**
       * Whether every worker of the task queue sees the same `root` (`KEEL_WORKSPACES_SHARED`, a network
       * file system): then any worker serves any run's calls. Else a run's calls go to the worker that
       * made its workspace, through that worker's own task queue `<task queue>/<worker id>`.
       */
      shared: z.boolean().default(false),
      /**
       * How long a call waits on the holding worker's queue before the run takes that worker, and the
       * workspace, for lost (`KEEL_WORKSPACE_FAILOVER_SECONDS`): the model is told, a new one is made.
       */
      failoverSeconds: z.number().positive().default(30),
    })
    .optional(),
  /** What the file tools may read but never write (`KEEL_WORKSPACE_PROTECT`); `.git` and `.keel` when absent. */
  workspaceProtect: z.array(z.string()).readonly().optional(),
  /** The local server's data directory when the CLI runs it: refused inside the workspace unprotected. */
  dataDirectory: z.string().min(1).optional(),
  /** The worker's own records (`KEEL_STATE_DIR`), such as completed side effects. */
  stateDirectory: z.string().min(1).optional(),
  /** Where tools' side effects are remembered; a file store under `stateDirectory` when absent. */
  idempotencyStore: hasMethods<IdempotencyStore>(
    'an idempotency store',
    'claim',
    'complete',
    'release',
  ).optional(),
  /** Limits for runs that set none (`KEEL_MAX_TURNS` and so on). */
  limits: RunLimits.partial().optional(),
  /** Budgets for runs that set none (`KEEL_MAX_TOTAL_TOKENS` and so on). */
  budgets: RunBudgets.partial().optional(),
  /**
   * Most output tokens a turn may spend when its run sets none (`KEEL_MAX_OUTPUT_TOKENS`); `null`
   * leaves it to the model server. 32,768 when absent. A streamed turn is also cut once it has
   * written 8 characters for each of these tokens, for servers that ignore the cap.
   */
  maxOutputTokens: MaxOutputTokens.nullable().optional(),
  /** US dollars per million tokens by model (`KEEL_MODEL_PRICES`), for cost budgets. */
  prices: z.record(z.string().min(1), ModelPrice).optional(),
  /**
   * How runs that name none keep their conversation (`KEEL_CONVERSATION`): `stateless` for a model
   * server that keeps none (LiteLLM without a database, Ollama, llama.cpp). Chained when absent.
   */
  conversation: ConversationMode.optional(),
  /**
   * Paces model calls (`KEEL_MODEL_CONCURRENCY`, `KEEL_MODEL_TOKENS_PER_MINUTE`): this worker's own, or,
   * with `store` (a postgres URL, `KEEL_MODEL_PACING_STORE`), shared by every worker of `pool` there.
   */
  modelPacing: z
    .object({
      maxConcurrent: z.number().int().positive().optional(),
      tokensPerMinute: z.number().int().positive().optional(),
      store: z.string().min(1).optional(),
      pool: z.string().min(1).default('keel'),
    })
    .optional(),
  /** Whether the namespace has Keel's search attributes (see `registerSearchAttributes`). */
  searchAttributes: z.boolean().default(false),
  /** Values to keep out of observations, history and logs, beyond secret-looking environment variables. */
  secrets: z.array(z.string()).readonly().optional(),
  /** The worker-side log for full error details; Temporal's activity logger when absent. */
  logger: hasMethods<Logger>(
    'a logger with debug, info, warn and error',
    'debug',
    'info',
    'warn',
    'error',
  ).optional(),
  /**
   * Also answer Keel's activities under their unprefixed names (`callModel`, …), which runs started
   * by Keel before the `keel.` prefix schedule. Only a worker that served such runs needs it.
   */
  legacyActivityNames: z.boolean().default(false),
});

/** What a caller passes: defaults may be left out. */
export type KeelOptions = z.input<typeof KeelOptions>;
/** The options once checked, with their defaults. */
export type ResolvedKeelOptions = z.output<typeof KeelOptions>;
