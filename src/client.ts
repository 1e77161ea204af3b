import { randomUUID } from 'node:crypto';
import {
  ApplicationFailure,
  Client,
  Connection,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { UpdateDefinition } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import type { z } from 'zod';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { AGENT_RUN_WORKFLOW, DEFAULT_TASK_QUEUE } from './contract/defaults.js';
import { EvalRunInput } from './contract/eval-input.js';
import type { EvalRunInputArgs, EvalRunResult, EvalRunState } from './contract/eval-input.js';
import { formatIssues } from './contract/format-issues.js';
import { runResultOfFailure } from './contract/run-result-of-failure.js';
import { RunInput } from './contract/run-input.js';
import type { RunInputArgs } from './contract/run-input.js';
import type { RunResult } from './contract/run-result.js';
import { payloadStoreFromEnvironment, taskQueueFromEnvironment } from './config.js';
import { clientDataConverterFromEnvironment } from './data-converter.js';
import type { RunState } from './contract/run-state.js';
import { shorten } from './contract/text.js';
import type { ApprovalDecision, SendReceipt } from './contract/run-messages.js';
import {
  approveUpdate,
  endSessionUpdate,
  rejectUpdate,
  sendUpdate,
  stateQuery,
} from './workflows/messages.js';
import type { agentRun } from './workflows/agent-run.js';
import { EVAL_RUN_WORKFLOW, evalStateQuery } from './workflows/eval-messages.js';
import type { evalRun } from './workflows/eval-run.js';
import type { StreamItem } from './contract/stream-event.js';
import { subscribe } from './stream/subscribe.js';
import { changeSchedule, createSchedule, listSchedules } from './schedule/schedules.js';
import type { RunScheduleSummary } from './schedule/schedules.js';
import type { ScheduleOptionsArgs } from './schedule/schedule-options.js';

/** A run input was refused before anything was started. */
export class InvalidRunInputError extends Error {
  override name = 'InvalidRunInputError';
}

/** An eval input was refused before anything was started (a kind of invalid run input). */
export class InvalidEvalInputError extends InvalidRunInputError {
  override name = 'InvalidEvalInputError';
}

/**
 * A run refused an update (approve, reject, send, endSession): the reason says why. Nothing changed,
 * and sending the same update again would be refused again. `cause` is Temporal's failure (for a
 * validator's refusal, a non-retryable `ApplicationFailure` of type `KeelError.InvalidUpdate`).
 */
export class RunUpdateRefusedError extends Error {
  override name = 'RunUpdateRefusedError';
}

/**
 * A run has no output of the shape asked for: it did not complete (`result.status` says how it
 * ended), declared no output schema, or its output does not parse with the caller's schema.
 */
export class RunOutputError extends Error {
  override name = 'RunOutputError';
  constructor(
    message: string,
    /** How the run ended. */
    readonly result: RunResult,
  ) {
    super(message);
  }
}

/** Options for {@link KeelClient.startRun}. */
export interface StartRunOptions {
  /** Workflow id; use a business key (`ticket-4711`) to make starts idempotent. A random `keel-…` id when absent. */
  runId?: string;
  /**
   * With a `runId`: if a run with that id exists (running or ended), return its id instead of
   * starting another or failing, so a retried start never makes a second run. Default false: an
   * existing running run is an error, an ended one is started again.
   */
  idempotent?: boolean;
}

/** Starts, inspects and cancels agent runs. A run id is the workflow id. */
export class KeelClient {
  constructor(
    /** The Temporal client underneath, for anything this class does not cover. */
    readonly temporal: Client,
    readonly taskQueue: string = DEFAULT_TASK_QUEUE,
  ) {}

  /**
   * Connects with the standard Temporal environment settings (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, …),
   * encrypting payloads as the worker does when `KEEL_CODEC_KEYS_FILE` or `KEEL_CODEC_KEY` is set, and with
   * the workers' payload store (`KEEL_PAYLOAD_STORE`) when one is set, to read what they stored outside history.
   */
  static async connect(taskQueue = taskQueueFromEnvironment()): Promise<KeelClient> {
    const dataConverter = await clientDataConverterFromEnvironment();
    const { connectionOptions, namespace } = loadClientConnectConfig();
    const connection = await Connection.connect(connectionOptions);
    return new KeelClient(
      new Client({ connection, namespace: namespace ?? 'default', dataConverter }),
      taskQueue,
    );
  }

  /** Validates the input here (so a bad input never starts a run) and starts the run; returns its id. */
  async startRun(input: RunInputArgs, options: StartRunOptions = {}): Promise<string> {
    const parsed = RunInput.safeParse(input);
    if (!parsed.success) {
      throw new InvalidRunInputError(`Invalid run input:\n${formatIssues(parsed.error).join('\n')}`);
    }
    const runId = options.runId ?? `keel-${randomUUID()}`;
    const idempotent = options.idempotent === true && options.runId !== undefined;
    await this.temporal.workflow
      .start<typeof agentRun>(AGENT_RUN_WORKFLOW, {
        taskQueue: this.taskQueue,
        workflowId: runId,
        args: [input],
        ...(idempotent && {
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        }),
        staticSummary: firstLine(parsed.data.task),
        staticDetails: startDetails(parsed.data),
      })
      .catch((error: unknown) => {
        // The run with this business key already ended: that run is the answer to this start.
        if (idempotent && error instanceof WorkflowExecutionAlreadyStartedError) return;
        throw error;
      });
    return runId;
  }

  /**
   * Creates a schedule that starts an ordinary run with `input` on this client's task queue `every`
   * interval or at the `cron` times (Temporal Schedules); both are checked first, and a
   * {@link ScheduleError} says what is wrong. Returns the schedule id. See docs/contract.md, "Schedules".
   */
  async createSchedule(options: ScheduleOptionsArgs, input: RunInputArgs): Promise<string> {
    return await createSchedule(this.temporal, this.taskQueue, options, input);
  }

  /** The schedules of Keel runs in the namespace: when they fire, the task, the next and recent runs. */
  async listSchedules(): Promise<RunScheduleSummary[]> {
    return await listSchedules(this.temporal);
  }

  /** Pauses a schedule (no run starts until it is unpaused); `note` says why, in the UI too. */
  async pauseSchedule(scheduleId: string, note?: string): Promise<void> {
    await changeSchedule(this.temporal, scheduleId, 'pause', note);
  }

  async unpauseSchedule(scheduleId: string, note?: string): Promise<void> {
    await changeSchedule(this.temporal, scheduleId, 'unpause', note);
  }

  /** Starts a run of the schedule now, even while another of its runs is going. */
  async triggerSchedule(scheduleId: string): Promise<void> {
    await changeSchedule(this.temporal, scheduleId, 'trigger');
  }

  /** Deletes a schedule; the runs it started are left as they are. */
  async deleteSchedule(scheduleId: string): Promise<void> {
    await changeSchedule(this.temporal, scheduleId, 'delete');
  }

  /**
   * Validates the eval input here (so a bad one never starts) and starts the `evalRun` workflow: one
   * child run per case, id `<evalId>.<caseId>`. Returns the eval's id (`keel-eval-<uuid>` unless given).
   */
  async startEval(input: EvalRunInputArgs, options: { evalId?: string } = {}): Promise<string> {
    const parsed = EvalRunInput.safeParse(input);
    if (!parsed.success) {
      throw new InvalidEvalInputError(`Invalid eval input:\n${formatIssues(parsed.error).join('\n')}`);
    }
    const evalId = options.evalId ?? `keel-eval-${randomUUID()}`;
    const { cases, concurrency } = parsed.data;
    const bytes = Buffer.byteLength(JSON.stringify(input));
    const tooLarge = (): InvalidEvalInputError =>
      new InvalidEvalInputError(
        `The eval's input (${cases.length} cases, ${(bytes / 1024 / 1024).toFixed(1)} MB as JSON) is over the ` +
          "Temporal server's payload size limit (2 MB unless the server sets limit.blobSize.error): split " +
          'the cases over several evals, or set KEEL_PAYLOAD_STORE so large payloads are kept outside history.',
      );
    // Over gRPC's 4 MB message limit no server takes it, and the client would retry for a minute
    // before saying so; a payload store would keep it outside the message.
    if (bytes > GRPC_MESSAGE_LIMIT_BYTES && payloadStoreFromEnvironment() === undefined) throw tooLarge();
    await this.temporal.workflow
      .start<typeof evalRun>(EVAL_RUN_WORKFLOW, {
        taskQueue: this.taskQueue,
        workflowId: evalId,
        args: [input],
        staticSummary: `eval of ${cases.length} case${cases.length === 1 ? '' : 's'}, ${concurrency} at a time`,
        staticDetails: `**Cases**\n\n${shorten(cases.map((entry) => `\`${entry.caseId}\``).join(', '), 4_000)}`,
      })
      .catch((error: unknown) => {
        throw tooLargeForServer(error) ? tooLarge() : error;
      });
    return evalId;
  }

  /** Waits for the eval to end and returns each case's ending; rejects with `WorkflowFailedError` if it was cancelled or refused. */
  async waitForEval(evalId: string): Promise<EvalRunResult> {
    return this.temporal.workflow.getHandle<typeof evalRun>(evalId).result();
  }

  /** Live state of an eval: its cases running and ended (needs a worker to answer the query). */
  async getEvalState(evalId: string): Promise<EvalRunState> {
    return this.temporal.workflow.getHandle<typeof evalRun>(evalId).query(evalStateQuery);
  }

  /** Live state of a run (needs a worker to answer the query). */
  async getRunState(runId: string): Promise<RunState> {
    return this.handle(runId).query(stateQuery);
  }

  /**
   * Waits for the run to end and returns its result, whatever it ended with: a run that did not
   * complete fails its execution with the result in the failure's details, which this reads back
   * (checked against the result schema). Rejects with `WorkflowFailedError` when there is no result:
   * the run was cancelled, terminated, timed out, or refused (`KeelError.InvalidInput`).
   */
  async waitForResult(runId: string): Promise<RunResult> {
    try {
      return await this.handle(runId).result();
    } catch (error) {
      const result = resultOfFailedRun(error);
      if (result !== undefined) return result;
      throw error;
    }
  }

  /**
   * Waits for a run started with an output schema (`output`, or its agent's) and returns its
   * output parsed with `schema`, typed: the zod schema the output was declared with (see
   * `structuredOutput`), so its refinements and transforms apply too. Rejects with
   * {@link RunOutputError} when the run did not complete or its output does not parse.
   */
  async waitForOutput<Schema extends z.ZodType>(runId: string, schema: Schema): Promise<z.output<Schema>> {
    const result = await this.waitForResult(runId);
    if (result.status !== 'completed')
      throw new RunOutputError(
        `Run ${runId} has no output: it ended ${result.status}` +
          ('reason' in result ? `: ${shorten(result.reason, 2000)}` : ''),
        result,
      );
    if (!('output' in result))
      throw new RunOutputError(
        `Run ${runId} completed without an output: it declared no output schema`,
        result,
      );
    const parsed = schema.safeParse(result.output);
    if (!parsed.success)
      throw new RunOutputError(
        `The output of run ${runId} does not parse with the schema given:\n${formatIssues(parsed.error).join('\n')}`,
        result,
      );
    return parsed.data;
  }

  /**
   * The run's stream: text deltas, call starts, observations, turn ends, resets and the end, each
   * with its offset. Iterate with `for await`; to resume after a disconnect, pass `from` one past
   * the last offset seen. See docs/contract.md, "Streaming".
   */
  stream(runId: string, options: { from?: number } = {}): AsyncGenerator<StreamItem, void, undefined> {
    return subscribe(this.temporal, runId, options);
  }

  /** Asks the run to stop: the running model call or tool is aborted and the run ends as Canceled. */
  async cancelRun(runId: string): Promise<void> {
    await this.handle(runId).cancel();
  }

  /**
   * Lets a call that waits for approval run. With `arguments`, it runs with those instead (checked
   * against the tool's schema first; the model is told). Throws {@link RunUpdateRefusedError} for an
   * unknown or already decided call or invalid arguments.
   */
  async approveCall(
    runId: string,
    callId: string,
    options: { arguments?: Record<string, unknown>; note?: string } = {},
  ): Promise<ApprovalDecision> {
    return this.update(runId, approveUpdate, { callId, ...options });
  }

  /** Refuses a call that waits for approval; the model sees `reason`. */
  async rejectCall(runId: string, callId: string, reason?: string): Promise<ApprovalDecision> {
    return this.update(runId, rejectUpdate, { callId, ...(reason !== undefined ? { reason } : {}) });
  }

  /**
   * Sends the run a user message. It reaches the model at the next turn boundary; a session that
   * waits for a message starts a turn at once. Refused once the run has ended.
   */
  async sendMessage(runId: string, text: string): Promise<SendReceipt> {
    return this.update(runId, sendUpdate, { text });
  }

  /** Ends a session: at once when it is idle, else after the answer it is working on. */
  async endSession(runId: string): Promise<void> {
    await this.update(runId, endSessionUpdate);
  }

  /** Runs an update; a refusal (validator or handler) becomes a {@link RunUpdateRefusedError}. */
  private async update<Ret>(runId: string, definition: UpdateDefinition<Ret, []>): Promise<Ret>;
  private async update<Ret, Arg>(
    runId: string,
    definition: UpdateDefinition<Ret, [Arg]>,
    arg: Arg,
  ): Promise<Ret>;
  private async update<Ret, Arg>(
    runId: string,
    definition: UpdateDefinition<Ret, [Arg]> | UpdateDefinition<Ret, []>,
    ...args: [Arg] | []
  ): Promise<Ret> {
    try {
      const handle = this.handle(runId);
      return await (args.length === 0
        ? handle.executeUpdate<Ret, []>(definition.name)
        : handle.executeUpdate<Ret, [Arg]>(definition.name, { args: args }));
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError) {
        const cause = error.cause;
        throw new RunUpdateRefusedError(cause?.message ?? error.message, { cause: cause ?? error });
      }
      if (error instanceof WorkflowNotFoundError) {
        throw new RunUpdateRefusedError(
          /completed/i.test(error.message) ? `Run ${runId} has ended` : `There is no run ${runId}`,
        );
      }
      throw error;
    }
  }

  private handle(runId: string): WorkflowHandle<typeof agentRun> {
    return this.temporal.workflow.getHandle<typeof agentRun>(runId);
  }
}

/** The result a run's failed execution carries (see `runEndingFailure`), or `undefined` for any other error. */
function resultOfFailedRun(error: unknown): RunResult | undefined {
  if (!(error instanceof WorkflowFailedError) || !(error.cause instanceof ApplicationFailure))
    return undefined;
  return runResultOfFailure(error.cause.type ?? undefined, error.cause.details ?? undefined);
}

/** gRPC's default limit on one message, which Temporal's frontend keeps (4 MiB). */
const GRPC_MESSAGE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Whether the server refused a start for its input's size: over its payload limit (INVALID_ARGUMENT,
 * "Blob data size exceeds limit") or over gRPC's message limit (RESOURCE_EXHAUSTED, "larger than max").
 */
function tooLargeForServer(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return false;
  const cause = error.cause as { code?: unknown; details?: unknown } | undefined;
  const details = String(cause?.details);
  return (
    (cause?.code === 3 && /blob data size exceeds limit/iu.test(details)) ||
    (cause?.code === 8 && /larger than max/iu.test(details))
  );
}

/** What the UI shows as the run's details: the whole task (shortened if huge) and what was set. */
function startDetails(input: RunInput): string {
  const task = shorten(input.task, 4_000);
  const settings = [
    input.model !== undefined ? `model \`${input.model}\`` : undefined,
    input.maxTurns !== undefined ? `max turns ${input.maxTurns}` : undefined,
    input.tools !== undefined ? `tools ${input.tools.map((tool) => `\`${tool}\``).join(', ')}` : undefined,
    input.session ? 'session' : undefined,
    input.conversation === 'stateless' ? 'stateless' : undefined,
    input.approvalTools !== undefined
      ? `approval for ${input.approvalTools.map((tool) => `\`${tool}\``).join(', ')}`
      : undefined,
    input.maxTotalTokens !== undefined ? `max tokens ${input.maxTotalTokens}` : undefined,
    input.maxCostUsd !== undefined ? `max cost $${input.maxCostUsd}` : undefined,
    input.maxDurationSeconds !== undefined ? `max time ${input.maxDurationSeconds}s` : undefined,
  ].filter((setting) => setting !== undefined);
  return `**Task**\n\n${task}${settings.length > 0 ? `\n\n${settings.join(' · ')}` : ''}`;
}

function firstLine(text: string): string {
  return shorten(text.trim().split('\n', 1)[0] ?? '', 200);
}

// The contract a caller works with, so `keel/client` alone types (and can validate) every input,
// result, state and message of a run.
export * from './contract/index.js';
export * from './contract/run-messages.js';
export * from './contract/stream-event.js';
export { RunNotStreamingError } from './stream/subscribe.js';
export { structuredOutput } from './agents/structured-output.js';
export { ScheduleError } from './schedule/schedules.js';
export type { RunScheduleSummary } from './schedule/schedules.js';
export { OVERLAP_POLICIES, ScheduleOptions } from './schedule/schedule-options.js';
export type { ScheduleOptionsArgs } from './schedule/schedule-options.js';
