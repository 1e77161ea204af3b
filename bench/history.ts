import { RunInput } from '../src/contract/run-input.js';
import type { RunInputArgs } from '../src/contract/run-input.js';
import { BenchModel, benchTask } from './support/bench-model.js';
import type { BenchEnvironment } from './support/environment.js';
import { firstReaching, fitGrowth } from './support/fit.js';
import {
  eventName,
  fetchEvents,
  firstExecution,
  historySize,
  stepBreakdown,
} from './support/history-timeline.js';
import type { HistoryEvent } from './support/history-timeline.js';
import { withKeelWorker } from './support/keel-worker.js';
import { round } from './support/stats.js';
import { ACTIVITY_NAMES } from '../src/contract/activity-names.js';

/** Temporal's defaults for suggesting continue-as-new (`limit.historyCount/historySize.suggestContinueAsNew`). */
export const SUGGEST_CONTINUE_AS_NEW = { events: 4096, bytes: 4 * 1024 * 1024 };

/** Options of the history-economy benchmark. */
export interface HistoryOptions {
  /** Model turns of each measured run. */
  turns: number;
  /** Observation sizes (characters the tool returns) to measure. */
  observationSizes: number[];
}

/** One conversation mode and observation size. */
export interface HistoryCase {
  conversation: 'chained' | 'stateless';
  observationChars: number;
  turns: number;
  /** The run's whole history (its first execution's, if it continued as new), as the server counts it. */
  total: { events: number; bytes: number };
  /**
   * The turn at which the run continued as new because Temporal suggested it (measured, not
   * extrapolated), when it did within the measured turns; the other figures are its first execution's.
   */
  continuedAsNewAtTurn?: number;
  /** Mean growth per step over the run (model turn + tool call). */
  perStep: { events: number; bytes: number; bytesByEventType: Record<string, number> };
  /** Growth per step at the run's last step (differs from the mean when history grows faster each step). */
  lastStepBytes: number;
  /** Model turns in the measured execution. */
  modelTurns: number;
  /** Turns at which the server would suggest continue-as-new, extrapolated from the run's growth. */
  turnsUntilSuggested: {
    byEvents: number | undefined;
    byBytes: number | undefined;
    first: number | undefined;
  };
}

/** What the history-economy benchmark found. */
export interface HistoryResult {
  options: HistoryOptions;
  cases: HistoryCase[];
  /** Why the stateless mode (no `previous_response_id`) was not measured, if it was not. */
  statelessUnavailable?: string;
}

/**
 * History economy: a Keel run's history events and bytes per step with `previous_response_id`
 * chaining (and without, where the run input offers `conversation: 'stateless'`), for small and
 * 12,000-character observations, and the turn at which Temporal would suggest continue-as-new,
 * extrapolated from the growth measured at every step of the run.
 */
export async function benchHistory(
  environment: BenchEnvironment,
  options: HistoryOptions,
  say: (line: string) => void,
): Promise<HistoryResult> {
  const stateless = RunInput.safeParse({ task: 'probe', conversation: 'stateless' }).success;
  const modes: Array<'chained' | 'stateless'> = stateless ? ['chained', 'stateless'] : ['chained'];
  const cases: HistoryCase[] = [];
  for (const conversation of modes) {
    for (const observationChars of options.observationSizes) {
      const model = await BenchModel.start({ turns: options.turns, observationChars });
      try {
        const measured = await withKeelWorker(environment, { modelUrl: model.url }, async ({ keel }) => {
          const input: RunInputArgs = {
            task: benchTask(`history-${conversation}-${observationChars}`),
            maxTurns: options.turns,
            tools: ['noop'],
            ...(conversation === 'stateless' ? ({ conversation } as Partial<RunInputArgs>) : {}),
          };
          const runId = await keel.startRun(input);
          const result = await keel.waitForResult(runId);
          if (result.status !== 'completed') throw new Error(`history run ended ${result.status}`);
          // Measure the first execution: a run that reaches the limit continues as new with a fresh history.
          const first = await firstExecution(environment.client, runId);
          return {
            events: await fetchEvents(environment.client, runId, first.runId),
            total: await historySize(environment.client, runId, first.runId),
            continuedAsNew: first.continuedAsNew,
          };
        });
        const found = historyCase(
          conversation,
          observationChars,
          options.turns,
          measured.events,
          measured.total,
        );
        if (measured.continuedAsNew) found.continuedAsNewAtTurn = found.modelTurns;
        say(
          `history: ${conversation}, ${observationChars}-character observations: ${found.perStep.events} events and ` +
            `${found.perStep.bytes} bytes per step; continue-as-new suggested at turn ${found.turnsUntilSuggested.first ?? '-'}`,
        );
        cases.push(found);
      } finally {
        await model.close();
      }
    }
  }
  return {
    options,
    cases,
    ...(stateless
      ? {}
      : {
          statelessUnavailable:
            "the run input has no stateless mode (conversation: 'stateless', store: false) in this version of src/",
        }),
  };
}

/** Growth per step, and the extrapolated turn at which continue-as-new is suggested. */
function historyCase(
  conversation: 'chained' | 'stateless',
  observationChars: number,
  turns: number,
  events: readonly HistoryEvent[],
  total: { events: number; bytes: number },
): HistoryCase {
  // At each model turn's scheduling: events so far, and the size the last workflow task saw.
  const points: Array<{ turn: number; events: number; bytes: number }> = [];
  let bytes = 0;
  for (const event of events) {
    const started = event.workflowTaskStartedEventAttributes;
    if (started?.historySizeBytes !== undefined && started.historySizeBytes !== null)
      bytes = Number(started.historySizeBytes);
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (eventName(event) === 'ActivityTaskScheduled' && name === ACTIVITY_NAMES.callModel)
      points.push({ turn: points.length + 1, events: Number(event.eventId), bytes });
  }
  const eventCurve = fitGrowth(points.map((point) => [point.turn, point.events] as const));
  const byteCurve = fitGrowth(points.map((point) => [point.turn, point.bytes] as const));
  // Continue-as-new is suggested on a workflow task once history passes a limit; Keel acts on it at the next turn.
  const byEvents = firstReaching(eventCurve, SUGGEST_CONTINUE_AS_NEW.events);
  const byBytes = firstReaching(byteCurve, SUGGEST_CONTINUE_AS_NEW.bytes);
  const breakdown = stepBreakdown(events, ACTIVITY_NAMES.callModel);
  const first = points[0];
  const last = points[points.length - 1];
  const beforeLast = points[points.length - 2];
  const steps = Math.max(1, points.length - 1);
  return {
    conversation,
    observationChars,
    turns,
    total,
    modelTurns: points.length,
    perStep: {
      events: round(((last?.events ?? 0) - (first?.events ?? 0)) / steps, 1),
      bytes: round(((last?.bytes ?? 0) - (first?.bytes ?? 0)) / steps, 0),
      bytesByEventType: breakdown.bytesPerStep,
    },
    lastStepBytes: (last?.bytes ?? 0) - (beforeLast?.bytes ?? 0),
    turnsUntilSuggested: {
      byEvents,
      byBytes,
      first: [byEvents, byBytes].filter((value) => value !== undefined).sort((a, b) => a - b)[0],
    },
  };
}

/** One line per case, for the summary. */
export function summarizeHistory(result: HistoryResult): string[] {
  const lines = result.cases.map(
    (entry) =>
      `  ${entry.conversation.padEnd(9)} ${String(entry.observationChars).padStart(6)}-char observations: ` +
      `${entry.perStep.events} events, ${entry.perStep.bytes} bytes per step; continue-as-new suggested at turn ` +
      `${entry.turnsUntilSuggested.first ?? '> 1,000,000'} (events limit: ${entry.turnsUntilSuggested.byEvents ?? '-'}, ` +
      `4 MiB limit: ${entry.turnsUntilSuggested.byBytes ?? '-'})` +
      (entry.continuedAsNewAtTurn === undefined
        ? ''
        : `; measured: continued as new after turn ${entry.continuedAsNewAtTurn}`),
  );
  if (result.statelessUnavailable)
    lines.push(`  without previous_response_id: not measured, ${result.statelessUnavailable}`);
  return lines;
}
