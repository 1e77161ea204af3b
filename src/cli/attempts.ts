import type proto from '@temporalio/proto';
import { attemptReason } from '../activities/attempt-reason.js';
import { ACTIVITY_NAMES, LEGACY_ACTIVITY_NAMES } from '../contract/activity-names.js';
import { cutToWidth, printable } from './terminal-text.js';

/** One of a run's pending activities, as the server describes it. */
export type PendingActivity = proto.temporal.api.workflow.v1.IPendingActivityInfo;

/** The most terminal columns of a failed attempt's reason a line shows. */
const REASON_CHARS = 200;

/**
 * A line for each attempt of a model or tool call that Temporal is trying again, said once per
 * attempt (`said` remembers them): which call, why the last attempt failed, and which attempt this
 * is of how many. Without it a turn whose attempt timed out shows nothing for minutes, and then
 * only the retry's answer.
 */
export function retryLines(pending: readonly PendingActivity[], said: Set<string>): string[] {
  const lines: string[] = [];
  for (const activity of pending) {
    const attempt = activity.attempt ?? 1;
    if (attempt < 2) continue;
    const key = `${activity.activityId ?? '?'}#${attempt}`;
    if (said.has(key)) continue;
    said.add(key);
    const of = activity.maximumAttempts ? ` of ${activity.maximumAttempts}` : '';
    const reason = cutToWidth(
      printable(attemptReason(activity.lastFailure), { singleLine: true }),
      REASON_CHARS,
    );
    lines.push(`  ↻ ${what(activity.activityType?.name)} ${reason}; trying again (attempt ${attempt}${of})`);
  }
  return lines;
}

function what(type: string | null | undefined): string {
  if (type === ACTIVITY_NAMES.callModel || type === LEGACY_ACTIVITY_NAMES.callModel) return 'the model call';
  if (type === ACTIVITY_NAMES.executeTool || type === LEGACY_ACTIVITY_NAMES.executeTool) return 'a tool call';
  return `the ${printable(type ?? 'activity', { singleLine: true })} call`;
}
