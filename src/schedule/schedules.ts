import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import type { Client, ScheduleDescription, ScheduleOverlapPolicy } from '@temporalio/client';
import { AGENT_RUN_WORKFLOW } from '../contract/defaults.js';
import { formatIssues } from '../contract/format-issues.js';
import { RunInput } from '../contract/run-input.js';
import type { RunInputArgs } from '../contract/run-input.js';
import { shorten } from '../contract/text.js';
import { everyMs, ScheduleOptions } from './schedule-options.js';
import type { ScheduleOptionsArgs } from './schedule-options.js';

/** A schedule's options or run input were refused, or the schedule is not there or taken: nothing changed. */
export class ScheduleError extends Error {
  override name = 'ScheduleError';
}

/** A schedule of Keel runs, as `listSchedules` shows it. */
export interface RunScheduleSummary {
  scheduleId: string;
  /** `every 1h` or `cron 0 9 * * 1-5 (Europe/Berlin)`. */
  when: string;
  paused: boolean;
  note: string | undefined;
  /** The start of the runs' task, and their agent. */
  task: string;
  agent: string | undefined;
  /** When the next runs start. */
  nextRunTimes: Date[];
  /** The runs it started most recently, oldest first: their workflow ids (run ids) and when. */
  recentRuns: { runId: string; startedAt: Date }[];
}

/**
 * Creates a Temporal Schedule that starts an ordinary `agentRun` with `input` on `taskQueue` at the
 * times `options` say. Its runs' workflow ids are the schedule id and the time; Temporal gives each
 * the `TemporalScheduledById` search attribute (`keel list --query 'TemporalScheduledById = "…"'`).
 */
export async function createSchedule(
  client: Client,
  taskQueue: string,
  options: ScheduleOptionsArgs,
  input: RunInputArgs,
): Promise<string> {
  const schedule = ScheduleOptions.safeParse(options);
  if (!schedule.success)
    throw new ScheduleError(`Invalid schedule:\n${formatIssues(schedule.error).join('\n')}`);
  const run = RunInput.safeParse(input);
  if (!run.success) throw new ScheduleError(`Invalid run input:\n${formatIssues(run.error).join('\n')}`);
  // A run that never ends would hold every later time back (overlap skip): a schedule's runs end.
  if (run.data.session)
    throw new ScheduleError(
      'Invalid run input:\nsession: a scheduled run cannot be a session; it would never end',
    );
  const { scheduleId, every, cron, timezone, overlap, paused, note } = schedule.data;
  try {
    await client.schedule.create({
      scheduleId,
      spec: {
        ...(every !== undefined ? { intervals: [{ every: everyMs(every) }] } : {}),
        ...(cron !== undefined ? { cronExpressions: [cron] } : {}),
        ...(timezone !== undefined ? { timezone } : {}),
      },
      action: {
        type: 'startWorkflow',
        workflowType: AGENT_RUN_WORKFLOW,
        workflowId: scheduleId,
        taskQueue,
        args: [input],
        staticSummary: shorten(run.data.task.split('\n')[0]!, 200),
      },
      policies: { overlap: overlap.toUpperCase() as ScheduleOverlapPolicy },
      state: { paused, ...(note !== undefined ? { note } : {}) },
      memo: {
        keel: {
          when: every !== undefined ? `every ${every}` : `cron ${cron}${timezone ? ` (${timezone})` : ''}`,
          task: shorten(run.data.task, 200),
          ...(run.data.agent !== undefined ? { agent: run.data.agent } : {}),
        },
      },
    });
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning)
      throw new ScheduleError(
        `A schedule with id ${scheduleId} exists already: delete it first, or pick another id`,
      );
    // The server checks what only it knows (a cron expression it cannot read, a time zone it lacks).
    if (error instanceof Error && /invalid|unknown time zone|cron/i.test(error.message))
      throw new ScheduleError(`The server refused schedule ${scheduleId}: ${error.message}`);
    throw error;
  }
  return scheduleId;
}

/**
 * The schedules of Keel runs in the namespace (others' schedules are left out), by id. The list comes
 * from Temporal's visibility, which may lag a moment behind a change; each schedule's state is then
 * read from the schedule itself, so a pause just made shows.
 */
export async function listSchedules(client: Client): Promise<RunScheduleSummary[]> {
  const ids: string[] = [];
  for await (const schedule of client.schedule.list())
    if (schedule.action?.workflowType === AGENT_RUN_WORKFLOW) ids.push(schedule.scheduleId);
  const schedules: RunScheduleSummary[] = [];
  for (const scheduleId of ids.sort()) {
    const described = await client.schedule
      .getHandle(scheduleId)
      .describe()
      .catch((error: unknown) => {
        // Deleted since it was listed.
        if (error instanceof ScheduleNotFoundError) return undefined;
        throw error;
      });
    if (described !== undefined) schedules.push(summary(described));
  }
  return schedules;
}

function summary(schedule: ScheduleDescription): RunScheduleSummary {
  const keel = (schedule.memo?.keel ?? {}) as { when?: string; task?: string; agent?: string };
  return {
    scheduleId: schedule.scheduleId,
    when: keel.when ?? '?',
    paused: schedule.state.paused,
    note: schedule.state.note || undefined,
    task: keel.task ?? '',
    agent: keel.agent,
    nextRunTimes: schedule.info.nextActionTimes,
    recentRuns: schedule.info.recentActions.map((action) => ({
      runId: action.action.workflow.workflowId,
      startedAt: action.takenAt,
    })),
  };
}

/** Pauses, unpauses, deletes or triggers (starts a run now) a schedule; a missing one is a {@link ScheduleError}. */
export async function changeSchedule(
  client: Client,
  scheduleId: string,
  change: 'pause' | 'unpause' | 'delete' | 'trigger',
  note?: string,
): Promise<void> {
  const handle = client.schedule.getHandle(scheduleId);
  try {
    if (change === 'delete') await handle.delete();
    else if (change === 'trigger') await handle.trigger();
    else await handle[change](note);
  } catch (error) {
    if (
      error instanceof ScheduleNotFoundError ||
      (error instanceof Error && /not found/i.test(error.message))
    )
      throw new ScheduleError(`There is no schedule ${scheduleId}`);
    throw error;
  }
}
