import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { round } from './stats.js';

// @temporalio/proto is CommonJS with a computed export: take it from the default export under ESM.
const { EventType, TaskQueueKind } = proto.temporal.api.enums.v1;
const { HistoryEvent } = proto.temporal.api.history.v1;

/** One event of a workflow history, as the client returns it. */
export type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** A run's history events (of its latest execution, or of the execution `runId`). */
export async function fetchEvents(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<HistoryEvent[]> {
  return (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

/** The first execution of a run that may have continued as new, and whether it did. */
export async function firstExecution(
  client: Client,
  workflowId: string,
): Promise<{ runId: string; continuedAsNew: boolean }> {
  const latest = await client.workflow.getHandle(workflowId).describe();
  const runId = latest.raw.workflowExecutionInfo?.firstRunId || latest.runId;
  return { runId, continuedAsNew: runId !== latest.runId };
}

/** Size and length of a run's history as the server counts them (what continue-as-new is suggested on). */
export async function historySize(
  client: Client,
  workflowId: string,
  runId?: string,
): Promise<{ events: number; bytes: number }> {
  const description = await client.workflow.getHandle(workflowId, runId).describe();
  return {
    events: description.historyLength,
    bytes: Number(description.raw.workflowExecutionInfo?.historySizeBytes ?? 0),
  };
}

function eventTimeMs(event: HistoryEvent): number {
  const time = event.eventTime;
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}

/** The short name of an event type (`WorkflowTaskScheduled`). */
export function eventName(event: HistoryEvent): string {
  const name = EventType[event.eventType ?? 0] ?? 'Unknown';
  return name
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_match, _separator: string, letter: string) => letter.toUpperCase());
}

/** A timed phase of a run, from server timestamps. */
interface Phase {
  /** `workflow task`, or the activity type (`callModel`, `executeTool`). */
  subject: string;
  /** `schedule→start` (waiting for a worker to take it) or `start→complete` (the worker's work). */
  stage: 'schedule→start' | 'start→complete';
  startMs: number;
  durationMs: number;
}

function phases(events: readonly HistoryEvent[]): Phase[] {
  const byId = new Map(events.map((event) => [Number(event.eventId), event]));
  const result: Phase[] = [];
  for (const event of events) {
    const type = event.eventType;
    const started =
      type === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
        ? event.workflowTaskStartedEventAttributes
        : type === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
          ? event.activityTaskStartedEventAttributes
          : undefined;
    if (started) {
      const scheduled = byId.get(Number(started.scheduledEventId));
      if (scheduled === undefined) continue;
      const subject = scheduled.activityTaskScheduledEventAttributes?.activityType?.name ?? 'workflow task';
      result.push({
        subject,
        stage: 'schedule→start',
        startMs: eventTimeMs(scheduled),
        durationMs: eventTimeMs(event) - eventTimeMs(scheduled),
      });
    }
    const completed =
      type === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
        ? event.workflowTaskCompletedEventAttributes
        : type === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
          ? event.activityTaskCompletedEventAttributes
          : undefined;
    if (completed) {
      const start = byId.get(Number(completed.startedEventId));
      const scheduled = byId.get(Number(completed.scheduledEventId));
      if (start === undefined || scheduled === undefined) continue;
      const subject = scheduled.activityTaskScheduledEventAttributes?.activityType?.name ?? 'workflow task';
      result.push({
        subject,
        stage: 'start→complete',
        startMs: eventTimeMs(start),
        durationMs: eventTimeMs(event) - eventTimeMs(start),
      });
    }
  }
  return result;
}

/**
 * Schedule→start latencies (ms) of a history's workflow tasks and activities: how long each task
 * waited for the worker to take it.
 */
export function dispatchLatencies(events: readonly HistoryEvent[]): {
  workflowTask: number[];
  activity: number[];
} {
  const waits = phases(events).filter((phase) => phase.stage === 'schedule→start');
  return {
    workflowTask: waits.filter((phase) => phase.subject === 'workflow task').map((phase) => phase.durationMs),
    activity: waits.filter((phase) => phase.subject !== 'workflow task').map((phase) => phase.durationMs),
  };
}

/** Where the time of one step (model turn + tool call) goes, averaged over a run's steps. */
export interface StepBreakdown {
  steps: number;
  /** Mean milliseconds per step, from one model activity's scheduling to the next one's. */
  stepMs: number;
  /** Mean milliseconds per step in each phase (`workflow task schedule→start`, …). */
  phasesMs: Record<string, number>;
  /** What the phases do not cover (event gaps, e.g. activity completed → next workflow task scheduled). */
  unaccountedMs: number;
  /**
   * The step without its workflow tasks' schedule→start waits: the work the worker and the server do.
   * That wait is bimodal on the dev server (a few ms or about 45 ms per task, varying between runs), so
   * this is the steadier figure for comparing two ways of running the same step.
   */
  busyMs: number;
  workflowTasksPerStep: number;
  /** Share of those workflow tasks the server put on the worker's sticky queue (the rest went to the shared queue). */
  stickyShare: number;
  activitiesPerStep: number;
  eventsPerStep: number;
  /** Events per step by type. */
  eventTypesPerStep: Record<string, number>;
  /** Serialized bytes per step by event type (proto encoding of each event). */
  bytesPerStep: Record<string, number>;
}

/**
 * Splits a run's history into steps at each scheduling of `modelActivity` and adds up, per step, the
 * server-timestamped phases in it. Only whole steps count (the last model turn, with no tool call
 * after it, is left out).
 */
export function stepBreakdown(events: readonly HistoryEvent[], modelActivity: string): StepBreakdown {
  const boundaries = events
    .filter(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
        event.activityTaskScheduledEventAttributes?.activityType?.name === modelActivity,
    )
    .map((event) => ({ ms: eventTimeMs(event), id: Number(event.eventId) }));
  const steps = Math.max(0, boundaries.length - 1);
  const first = boundaries[0];
  const last = boundaries[boundaries.length - 1];
  const empty: StepBreakdown = {
    steps,
    stepMs: Number.NaN,
    phasesMs: {},
    unaccountedMs: Number.NaN,
    busyMs: Number.NaN,
    workflowTasksPerStep: Number.NaN,
    stickyShare: Number.NaN,
    activitiesPerStep: Number.NaN,
    eventsPerStep: Number.NaN,
    eventTypesPerStep: {},
    bytesPerStep: {},
  };
  if (first === undefined || last === undefined || steps === 0) return empty;
  const inWindow = (ms: number): boolean => ms >= first.ms && ms < last.ms;
  const phaseTotals: Record<string, number> = {};
  for (const phase of phases(events).filter((candidate) => inWindow(candidate.startMs))) {
    const key = `${phase.subject} ${phase.stage}`;
    phaseTotals[key] = (phaseTotals[key] ?? 0) + phase.durationMs;
  }
  const windowEvents = events.filter((event) => {
    const id = Number(event.eventId);
    return id >= first.id && id < last.id;
  });
  const typeCounts: Record<string, number> = {};
  const typeBytes: Record<string, number> = {};
  for (const event of windowEvents) {
    const name = eventName(event);
    typeCounts[name] = (typeCounts[name] ?? 0) + 1;
    typeBytes[name] = (typeBytes[name] ?? 0) + HistoryEvent.encode(event).finish().length;
  }
  const scheduled = windowEvents
    .map((event) => event.workflowTaskScheduledEventAttributes)
    .filter((attributes) => attributes !== null && attributes !== undefined);
  const sticky = scheduled.filter(
    (attributes) => attributes.taskQueue?.kind === TaskQueueKind.TASK_QUEUE_KIND_STICKY,
  ).length;
  const total = last.ms - first.ms;
  const covered = Object.values(phaseTotals).reduce((sum, value) => sum + value, 0);
  const perStep = (record: Record<string, number>, digits = 2): Record<string, number> =>
    Object.fromEntries(Object.entries(record).map(([key, value]) => [key, round(value / steps, digits)]));
  return {
    steps,
    stepMs: round(total / steps),
    phasesMs: perStep(phaseTotals),
    unaccountedMs: round((total - covered) / steps),
    busyMs: round((total - (phaseTotals['workflow task schedule→start'] ?? 0)) / steps),
    workflowTasksPerStep: round((typeCounts.WorkflowTaskCompleted ?? 0) / steps),
    stickyShare: round(scheduled.length === 0 ? Number.NaN : sticky / scheduled.length),
    activitiesPerStep: round((typeCounts.ActivityTaskCompleted ?? 0) / steps),
    eventsPerStep: round(windowEvents.length / steps),
    eventTypesPerStep: perStep(typeCounts),
    bytesPerStep: perStep(typeBytes, 0),
  };
}

/** Averages several runs' breakdowns (weighted by their steps). */
export function mergeBreakdowns(breakdowns: readonly StepBreakdown[]): StepBreakdown | undefined {
  const usable = breakdowns.filter((breakdown) => breakdown.steps > 0);
  const steps = usable.reduce((sum, breakdown) => sum + breakdown.steps, 0);
  if (steps === 0) return undefined;
  const mean = (pick: (breakdown: StepBreakdown) => number): number =>
    round(usable.reduce((sum, breakdown) => sum + pick(breakdown) * breakdown.steps, 0) / steps);
  const meanRecord = (pick: (breakdown: StepBreakdown) => Record<string, number>): Record<string, number> => {
    const keys = new Set(usable.flatMap((breakdown) => Object.keys(pick(breakdown))));
    return Object.fromEntries([...keys].map((key) => [key, mean((breakdown) => pick(breakdown)[key] ?? 0)]));
  };
  return {
    steps,
    stepMs: mean((breakdown) => breakdown.stepMs),
    phasesMs: meanRecord((breakdown) => breakdown.phasesMs),
    unaccountedMs: mean((breakdown) => breakdown.unaccountedMs),
    busyMs: mean((breakdown) => breakdown.busyMs),
    workflowTasksPerStep: mean((breakdown) => breakdown.workflowTasksPerStep),
    stickyShare: mean((breakdown) => breakdown.stickyShare),
    activitiesPerStep: mean((breakdown) => breakdown.activitiesPerStep),
    eventsPerStep: mean((breakdown) => breakdown.eventsPerStep),
    eventTypesPerStep: meanRecord((breakdown) => breakdown.eventTypesPerStep),
    bytesPerStep: meanRecord((breakdown) => breakdown.bytesPerStep),
  };
}
