import type { WorkspaceRoute } from './workspace-route.js';
import type { AgentStamp } from '../contract/agent-profile.js';
import type { GuardrailNames } from '../contract/guardrail.js';
import type { RunBudgets, RunInput, RunLimits } from '../contract/run-input.js';
import type { RunState } from '../contract/run-state.js';
import type { ToolInfo } from '../contract/tool-info.js';
import type { ModelPrice } from '../contract/usage.js';
import type { Approvals } from './approvals.js';
import type { Conversation } from './conversation.js';
import type { StreamLog } from './stream-log.js';
import type { ActivityNames } from './keel-activities.js';
import type { ReplayCalls } from './replay-calls.js';
import type { StopCondition } from './stop-conditions.js';

/**
 * Everything one workflow execution of a run works with, set up once at its start (see
 * `setUpRun`). The steps read it and change only `state`, `queue` and `flags`.
 */
export interface RunContext {
  /** The run input with its agent's defaults filled in (see `applyAgent`). */
  input: RunInput;
  /** The run input as the caller gave it: what the run carries across continue-as-new. */
  givenInput: RunInput;
  /** The agent the run was started with, and its version on this worker. */
  agent: AgentStamp | undefined;
  /** The names of its agent's guardrails, by stage (see `guardrails.ts`). */
  guardrails: GuardrailNames | undefined;
  /** The live state the `state` query answers; also what the run carries across continue-as-new. */
  state: RunState;
  /** Whether this execution checks every argument and takes signals (see `STRICT_MESSAGES_PATCH`). */
  strict: boolean;
  /** The names this execution schedules Keel's activities under. */
  names: ActivityNames;
  /** Messages that wait for the next turn; the handlers append to it. */
  queue: string[];
  /** The tools the run offers, in the order the model sees them. */
  tools: readonly ToolInfo[];
  toolsByName: ReadonlyMap<string, ToolInfo>;
  approvals: Approvals;
  model: string;
  limits: RunLimits;
  budgets: Partial<RunBudgets>;
  /** The model's price, when the worker knows it: the run's cost is counted from it. */
  price: ModelPrice | undefined;
  /** Checked before every step: the budgets. */
  stopBeforeStep: StopCondition;
  /** Checked after a model turn that asks for calls: the budgets, then the turn limit. */
  stopBeforeTools: StopCondition;
  /** Epoch milliseconds when the run's first execution started: the time budget counts from it. */
  startedAtMs: number;
  /** The turn this execution started at (continue-as-new counts turns per execution). */
  turnAtStart: number;
  /** A stateless run's conversation; `null` for a chained one. */
  conversation: Conversation | null;
  /** Whether the namespace has Keel's search attributes registered, so the run may set them. */
  searchAttributes: boolean;
  /** Whether progress alone (turns, tokens) is upserted every `PROGRESS_UPSERT_TURNS` turns only (see `LEAN_UPSERTS_PATCH`). */
  leanUpserts: boolean;
  /** Bytes the observations of one turn may take, so a model request stays within one payload. */
  observationBudget: number;
  flags: RunFlags;
  /** Where the run's workspace is, when its worker pins workspaces (see `WORKSPACE_AFFINITY_PATCH`). */
  workspace: WorkspaceRoute | undefined;
  /** The run's stream to callers, in executions that stream (see `STREAM_PATCH`). */
  stream: StreamLog | undefined;
  /** A replayed run's recorded answers (`input.replay`), with how many of each it has used. */
  replay: ReplayCalls | undefined;
}

/** What changes between steps besides the state. */
export interface RunFlags {
  /** An endSession arrived: a session ends after its current answer. */
  ending: boolean;
  /** The time budget's timer fired. */
  outOfTime: boolean;
  /** The last non-empty text the model wrote (a budget's or the turn limit's result shows it). */
  lastText: string;
  /** Answers in a row sent back for not matching the run's output schema. */
  outputRetries: number;
}
