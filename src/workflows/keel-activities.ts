import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import type { KeelActivities } from '../activities/create-activities.js';
import { ACTIVITY_NAMES, LEGACY_ACTIVITY_NAMES } from '../contract/activity-names.js';

/**
 * Marks the executions that schedule Keel's activities under their `keel.`-prefixed names. Histories
 * from before it replay with the unprefixed names they scheduled (workers answer both).
 */
export const ACTIVITY_NAMES_PATCH = 'keel-activity-names';

/** The names one execution schedules Keel's activities under. */
export type ActivityNames = typeof ACTIVITY_NAMES | typeof LEGACY_ACTIVITY_NAMES;

/**
 * Decides the activity names of this execution, once, at its start: `patched` must give the same
 * answer for the whole execution, and while replaying an old history it is false only until the
 * replay catches up, so it is read once and kept.
 */
export function chooseActivityNames(): ActivityNames {
  return patched(ACTIVITY_NAMES_PATCH) ? ACTIVITY_NAMES : LEGACY_ACTIVITY_NAMES;
}

/** Keel's activities as one execution schedules them, under the names it chose. */
export interface KeelActivityStubs {
  describeWorker: KeelActivities[typeof ACTIVITY_NAMES.describeWorker];
  callModel: KeelActivities[typeof ACTIVITY_NAMES.callModel];
  executeTool: KeelActivities[typeof ACTIVITY_NAMES.executeTool];
  openWorkspace: KeelActivities[typeof ACTIVITY_NAMES.openWorkspace];
  checkGuardrails: KeelActivities[typeof ACTIVITY_NAMES.checkGuardrails];
}

/** Keel's activities with `options`, scheduled under the execution's names for them. */
export function keelActivities(names: ActivityNames, options: ActivityOptions): KeelActivityStubs {
  return stubsFor(names, proxyActivities<KeelActivities>(options));
}

/** Keel's activities run as local activities, under the execution's names for them. */
export function keelLocalActivities(names: ActivityNames, options: LocalActivityOptions): KeelActivityStubs {
  return stubsFor(names, proxyLocalActivities<KeelActivities>(options));
}

function stubsFor(names: ActivityNames, stubs: KeelActivities): KeelActivityStubs {
  // Reading a stub schedules nothing: only calling it does.
  return {
    describeWorker: stubs[names.describeWorker],
    callModel: stubs[names.callModel],
    executeTool: stubs[names.executeTool],
    openWorkspace: stubs[names.openWorkspace],
    checkGuardrails: stubs[names.checkGuardrails],
  };
}
