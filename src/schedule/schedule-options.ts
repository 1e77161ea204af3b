import { z } from 'zod';

/** How often a schedule starts its run: a whole number of seconds, minutes, hours or days. */
const EVERY = /^([1-9]\d{0,6})(s|m|h|d)$/;

/** What a schedule does when its next run is due while the last one still runs (Temporal's overlap policies). */
export const OVERLAP_POLICIES = [
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
  'terminate_other',
  'allow_all',
] as const;

/**
 * A schedule of runs: an id, when (`every` or `cron`, one of them), and what to do when a run is
 * still going at the next time. The run input is checked as `startRun` checks it.
 */
export const ScheduleOptions = z
  .strictObject({
    scheduleId: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/,
        'must be 1 to 200 letters, digits, ., _ or -, starting with a letter or digit',
      )
      .describe("The schedule's id; its runs' workflow ids start with it."),
    every: z
      .string()
      .regex(EVERY, 'must be a whole number and a unit, s, m, h or d (30m, 1h, 1d)')
      .optional()
      .describe('Start a run at this interval, e.g. 30m, 1h, 1d.'),
    cron: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe(
        'Start a run at these times: a cron expression, e.g. "0 9 * * 1-5" (minute hour day month weekday).',
      ),
    timezone: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/, 'must be an IANA time zone name, e.g. Europe/Berlin')
      .optional()
      .describe('The time zone of a cron expression (IANA, e.g. Europe/Berlin); UTC when absent.'),
    overlap: z
      .enum(OVERLAP_POLICIES)
      .default('skip')
      .describe(
        'When a run is still going at the next time: skip the new one (default), buffer it, cancel or terminate the old one, or allow both.',
      ),
    paused: z.boolean().default(false).describe('Create the schedule paused.'),
    note: z.string().max(1000).optional().describe('For people: why the schedule exists or is paused.'),
  })
  .superRefine((options, context) => {
    if ((options.every === undefined) === (options.cron === undefined))
      context.addIssue({
        code: 'custom',
        path: [],
        message: 'give exactly one of every and cron (keel schedule: --every or --cron)',
      });
    if (options.timezone !== undefined && options.cron === undefined)
      context.addIssue({ code: 'custom', path: ['timezone'], message: 'applies only to a cron schedule' });
  });
export type ScheduleOptionsArgs = z.input<typeof ScheduleOptions>;
export type ScheduleOptions = z.output<typeof ScheduleOptions>;

/** `every` as milliseconds. */
export function everyMs(every: string): number {
  const [, count, unit] = EVERY.exec(every)!;
  return Number(count) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as 's' | 'm' | 'h' | 'd'];
}
