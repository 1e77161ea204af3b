import type { RunInputArgs } from '../contract/run-input.js';
import { ScheduleError } from '../schedule/schedules.js';
import type { ScheduleOptionsArgs } from '../schedule/schedule-options.js';
import { withClient } from './inspect-commands.js';
import { EXIT, UsageError } from './output.js';
import type { Output } from './output.js';

/** What `keel schedule` does, as its arguments say. */
export type ScheduleCommand =
  | { kind: 'create'; options: ScheduleOptionsArgs; input: RunInputArgs }
  | { kind: 'list' }
  | { kind: 'pause' | 'unpause'; scheduleId: string; note: string | undefined }
  | { kind: 'trigger' | 'delete'; scheduleId: string };

/** `keel schedule create|list|pause|unpause|trigger|delete`: Temporal Schedules of Keel runs. */
export function scheduleCommand(out: Output, taskQueue: string, command: ScheduleCommand): Promise<number> {
  return withClient(out, taskQueue, async (keel) => {
    try {
      switch (command.kind) {
        case 'create': {
          const scheduleId = await keel.createSchedule(command.options, command.input);
          if (out.json) out.data({ scheduleId, created: true });
          else
            out.line(
              `Schedule ${scheduleId} created: it starts runs on task queue "${taskQueue}". ` +
                `\`keel list --query 'TemporalScheduledById = "${scheduleId}"'\` lists them.`,
            );
          return EXIT.ok;
        }
        case 'list': {
          const schedules = await keel.listSchedules();
          if (out.json) out.data(schedules);
          else if (schedules.length === 0) out.line('No schedules.');
          for (const schedule of out.json ? [] : schedules) {
            const next = schedule.paused
              ? 'paused'
              : `next ${schedule.nextRunTimes[0]?.toISOString() ?? '-'}`;
            const last = schedule.recentRuns.at(-1);
            out.line(
              `${schedule.scheduleId}  ${schedule.when}  ${next}  last ${last ? `${last.runId} ${last.startedAt.toISOString()}` : '-'}` +
                `  ${schedule.agent ? `agent ${schedule.agent}: ` : ''}${schedule.task}` +
                (schedule.note ? `  (${schedule.note})` : ''),
            );
          }
          return EXIT.ok;
        }
        case 'pause':
        case 'unpause':
          await keel[command.kind === 'pause' ? 'pauseSchedule' : 'unpauseSchedule'](
            command.scheduleId,
            command.note,
          );
          if (out.json) out.data({ scheduleId: command.scheduleId, paused: command.kind === 'pause' });
          else
            out.line(`Schedule ${command.scheduleId} ${command.kind === 'pause' ? 'paused' : 'unpaused'}.`);
          return EXIT.ok;
        case 'trigger':
          await keel.triggerSchedule(command.scheduleId);
          if (out.json) out.data({ scheduleId: command.scheduleId, triggered: true });
          else out.line(`Schedule ${command.scheduleId} starts a run now.`);
          return EXIT.ok;
        case 'delete':
          await keel.deleteSchedule(command.scheduleId);
          if (out.json) out.data({ scheduleId: command.scheduleId, deleted: true });
          else out.line(`Schedule ${command.scheduleId} deleted; the runs it started are left as they are.`);
          return EXIT.ok;
      }
    } catch (error) {
      // A schedule refused or missing: the message says it, as a usage error or a plain one.
      if (error instanceof ScheduleError && command.kind === 'create' && /^Invalid /.test(error.message))
        throw new UsageError(error.message);
      if (error instanceof ScheduleError) {
        out.error('schedule', error.message, {});
        return EXIT.error;
      }
      throw error;
    }
  });
}
