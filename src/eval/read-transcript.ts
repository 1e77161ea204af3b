import type { Client } from '@temporalio/client';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import proto from '@temporalio/proto';
import type { z } from 'zod';
import { ACTIVITY_NAMES, LEGACY_ACTIVITY_NAMES } from '../contract/activity-names.js';
import { ModelRequest } from '../contract/model-request.js';
import { ModelTurn } from '../contract/model-turn.js';
import { formatIssues } from '../contract/format-issues.js';
import { addUsage, emptyUsage } from '../contract/usage.js';
import { RunTranscript } from './recorded-run.js';
import type { TranscriptTurn } from './recorded-run.js';
import { CallAnswers } from './call-answers.js';
import { outcomeOfClose } from './transcript-outcome.js';
import type { CloseEvent } from './transcript-outcome.js';
import { inlineStoredPayloads, runExecutions } from './run-executions.js';
import type { History } from './run-executions.js';

type HistoryEvent = NonNullable<History['events']>[number];

// @temporalio/proto is CommonJS with a computed export: take it from the default export under ESM.
const HistoryMessage = proto.temporal.api.history.v1.History;

/** The workflow type of a Keel run. */
const RUN_WORKFLOW_TYPE = 'agentRun';

const MODEL_ACTIVITIES = new Set<string>([ACTIVITY_NAMES.callModel, LEGACY_ACTIVITY_NAMES.callModel]);
const TOOL_ACTIVITIES = new Set<string>([ACTIVITY_NAMES.executeTool, LEGACY_ACTIVITY_NAMES.executeTool]);

/** The marker a local activity's result is recorded in. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** A history that is not a Keel run's, or that Keel cannot make sense of: the message says where. */
export class TranscriptError extends Error {
  override name = 'TranscriptError';
}

/**
 * What the run did, read from its workflow history (every execution, first to last, across
 * continue-as-new), its payloads decoded with the client's data converter: its codecs (an encrypted
 * run) and its external payload store (KEEL_PAYLOAD_STORE). A run still going reads as `running`.
 */
export async function readTranscript(client: Client, runId: string): Promise<RunTranscript> {
  const executions = await runExecutions(client, runId);
  return transcriptFromHistories(
    runId,
    executions.map((execution) => execution.history),
    client.options.loadedDataConverter,
  );
}

/**
 * The transcript of a run from its executions' histories, first to last (from the cluster or a
 * history file), decoded with `converter`. Each call's answer is what the model was told: the
 * observation the next turn's request carried (so calls answered without a tool activity, such as
 * rejected or not-executed ones, have theirs too), else the tool activity's own result when no turn
 * came after it. The histories are not changed.
 */
export async function transcriptFromHistories(
  runId: string,
  histories: readonly History[],
  converter: LoadedDataConverter,
): Promise<RunTranscript> {
  if (histories.length === 0) throw new TranscriptError(`Run ${runId} has no history.`);
  const decode = async <T>(payloads: Payload[] | null | undefined, what: string): Promise<T> => {
    try {
      return await decodeFromPayloadsAtIndex<T>(converter, 0, payloads);
    } catch (error) {
      throw new TranscriptError(`Run ${runId}: cannot decode ${what}: ${(error as Error).message}`);
    }
  };
  let input: Record<string, unknown> | undefined;
  const turns: TranscriptTurn[] = [];
  const answers = new CallAnswers();
  let close: CloseEvent | undefined;
  for (const [index, given] of histories.entries()) {
    // A copy: resolving stored payloads rewrites the history in place.
    const history = HistoryMessage.decode(HistoryMessage.encode(given).finish());
    await inlineStoredPayloads(history, converter);
    // Only the last execution's ending is the run's: the others continued as new.
    close = undefined;
    const scheduled = new Map<string, { kind: 'model'; request: ModelRequest } | { kind: 'tool' }>();
    for (const event of history.events ?? []) {
      const where = `event ${String(event.eventId)} of execution ${index + 1}`;
      const started = event.workflowExecutionStartedEventAttributes;
      if (started) {
        if (started.workflowType?.name !== RUN_WORKFLOW_TYPE) {
          throw new TranscriptError(
            `Run ${runId} is not a Keel run: its workflow type is ${JSON.stringify(started.workflowType?.name ?? '')}, not ${RUN_WORKFLOW_TYPE}.`,
          );
        }
        if (index === 0)
          input = runInputOf(await decode(started.input?.payloads, `the run input (${where})`), runId);
        continue;
      }
      const activity = event.activityTaskScheduledEventAttributes;
      if (activity) {
        const name = activity.activityType?.name ?? '';
        if (MODEL_ACTIVITIES.has(name)) {
          const request = parsed(
            ModelRequest,
            await decode(activity.input?.payloads, `a model request (${where})`),
            `the model request of ${where}`,
            runId,
          );
          answers.addRequest(request);
          scheduled.set(String(event.eventId), { kind: 'model', request });
        } else if (TOOL_ACTIVITIES.has(name)) scheduled.set(String(event.eventId), { kind: 'tool' });
        continue;
      }
      const completed = event.activityTaskCompletedEventAttributes;
      if (completed) {
        const of = scheduled.get(String(completed.scheduledEventId));
        if (of === undefined) continue;
        const result = await decode<unknown>(completed.result?.payloads, `an activity result (${where})`);
        if (of.kind === 'tool') answers.addToolResult(result);
        else turns.push(turnOf(of.request, parsed(ModelTurn, result, `the model turn of ${where}`, runId)));
        continue;
      }
      const marker = event.markerRecordedEventAttributes;
      if (marker) {
        // A local activity (a fast read-only tool) leaves only a marker: its result in `result`
        // (`data` holds the SDK's own bookkeeping). Only a tool's result parses as an observation.
        const result = marker.details?.result?.payloads;
        if (marker.markerName === LOCAL_ACTIVITY_MARKER && result && result.length > 0) {
          answers.addToolResult(await decode<unknown>(result, `a local activity's result (${where})`));
        }
        continue;
      }
      const closing = closeEventOf(event);
      if (closing !== undefined) close = closing;
    }
  }
  if (input === undefined) throw new TranscriptError(`Run ${runId}: its first execution has no start event.`);
  for (const turn of turns) {
    for (const call of turn.calls) {
      const answer = answers.answerOf(call.callId, turn.responseId);
      if (answer !== undefined) call.answer = answer;
    }
  }
  const lastText = turns.findLast((turn) => turn.text !== '')?.text ?? '';
  const { outcome, result } = await outcomeOfClose(close, lastText, converter);
  return RunTranscript.parse({
    runId,
    input,
    task: typeof input.task === 'string' ? input.task : '',
    turns,
    outcome,
    usage: result?.usage ?? turns.reduce((sum, turn) => addUsage(sum, turn.usage), emptyUsage),
    ...(result?.costUsd !== undefined ? { costUsd: result.costUsd } : {}),
  });
}

/** A model turn as the transcript has it, its calls still unanswered. */
function turnOf(request: ModelRequest, turn: ModelTurn): TranscriptTurn {
  return {
    turn: request.turn,
    responseId: turn.responseId,
    model: turn.model,
    text: turn.text,
    usage: turn.usage,
    calls: turn.toolCalls.map(({ callId, name, argumentsJson }) => ({ callId, name, argumentsJson })),
  };
}

/** The run input, which a Keel run always starts with as an object. */
function runInputOf(value: unknown, runId: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TranscriptError(`Run ${runId} did not start with a run input object.`);
  }
  return value as Record<string, unknown>;
}

/** `value` parsed by `schema`; a history that does not fit Keel's contract is an error naming the event. */
function parsed<T>(schema: z.ZodType<T>, value: unknown, what: string, runId: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new TranscriptError(
      `Run ${runId}: ${what} is not what Keel records: ${formatIssues(result.error).slice(0, 3).join('; ')}`,
    );
  }
  return result.data;
}

/** The event that ends an execution, or `undefined` for any other event. */
function closeEventOf(event: HistoryEvent): CloseEvent | undefined {
  if (event.workflowExecutionCompletedEventAttributes) {
    return { kind: 'completed', result: event.workflowExecutionCompletedEventAttributes.result?.payloads };
  }
  if (event.workflowExecutionFailedEventAttributes) {
    return { kind: 'failed', failure: event.workflowExecutionFailedEventAttributes.failure ?? undefined };
  }
  if (event.workflowExecutionCanceledEventAttributes) return { kind: 'cancelled' };
  if (event.workflowExecutionTerminatedEventAttributes) {
    return { kind: 'terminated', reason: event.workflowExecutionTerminatedEventAttributes.reason ?? '' };
  }
  if (event.workflowExecutionTimedOutEventAttributes) return { kind: 'timed_out' };
  // Not an ending: the next execution's history goes on with the run.
  if (event.workflowExecutionContinuedAsNewEventAttributes) return { kind: 'continued' };
  return undefined;
}
