import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduleError } from '../../src/client.js';
import type { KeelClient, RunScheduleSummary } from '../../src/client.js';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import { until } from '../support/until.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The runs a schedule started, as Temporal's visibility lists them (eventually consistent). */
async function scheduledRuns(keel: KeelClient, scheduleId: string) {
  const runs: { workflowId: string; status: string }[] = [];
  const query = `WorkflowType = "agentRun" AND TemporalScheduledById = "${scheduleId}"`;
  for await (const execution of keel.temporal.workflow.list({ query }))
    runs.push({ workflowId: execution.workflowId, status: execution.status.name });
  return runs;
}

/** The schedule as `listSchedules` shows it, once Temporal's visibility (which may lag) lists it. */
async function listedSchedule(keel: KeelClient, scheduleId: string): Promise<RunScheduleSummary> {
  let listed: RunScheduleSummary | undefined;
  await until(
    async () => {
      listed = (await keel.listSchedules()).find((schedule) => schedule.scheduleId === scheduleId);
      return listed !== undefined;
    },
    `schedule ${scheduleId} is listed`,
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return listed!;
}

/** Deletes the schedule whatever the test did, so it cannot go on firing on the shared server. */
async function deleteQuietly(keel: KeelClient, scheduleId: string): Promise<void> {
  await keel.deleteSchedule(scheduleId).catch((error: unknown) => {
    if (!(error instanceof ScheduleError)) throw error;
  });
}

describe('schedules: an agent and task on an interval or cron, each run an ordinary agentRun', () => {
  it('fires twice on its interval, each run an ordinary run found by its schedule id; a paused schedule lists as paused', async () => {
    const scheduleId = `nightly-${randomUUID().slice(0, 8)}`;
    await withScenario(
      server,
      () => reply.text('Summary: all quiet.'),
      {},
      async ({ keel, model }) => {
        try {
          expect(
            await keel.createSchedule(
              { scheduleId, every: '2s', note: 'the team wants a digest' },
              { task: "Summarise today's tickets.", maxTurns: 2 },
            ),
          ).toBe(scheduleId);
          await until(
            async () =>
              (await scheduledRuns(keel, scheduleId)).filter((run) => run.status === 'COMPLETED').length >= 2,
            'the schedule has started two runs that completed',
            { timeoutMs: 60_000 },
          );
          await keel.pauseSchedule(scheduleId, 'holiday');
          const listed = await listedSchedule(keel, scheduleId);
          expect(listed).toMatchObject({
            when: 'every 2s',
            paused: true,
            note: 'holiday',
            task: "Summarise today's tickets.",
          });
          expect(listed.recentRuns.length).toBeGreaterThanOrEqual(2);
          const runs = await scheduledRuns(keel, scheduleId);
          for (const run of runs) expect(run.workflowId.startsWith(`${scheduleId}-`)).toBe(true);
          // Each is an ordinary run: its result as any run's.
          const completed = runs.find((run) => run.status === 'COMPLETED')!;
          expect(await keel.waitForResult(completed.workflowId)).toMatchObject({
            status: 'completed',
            finalText: 'Summary: all quiet.',
          });
          expect(model.requests[0]!.body.input).toEqual([
            { type: 'message', role: 'user', content: "Summarise today's tickets." },
          ]);
        } finally {
          await deleteQuietly(keel, scheduleId);
        }
        expect((await keel.listSchedules()).map((schedule) => schedule.scheduleId)).not.toContain(scheduleId);
      },
    );
  });

  it('refuses a schedule it cannot run before anything is created, and says when one is missing or taken', async () => {
    await withScenario(server, [], {}, async ({ keel }) => {
      const scheduleId = `refused-${randomUUID().slice(0, 8)}`;
      await expect(
        keel.createSchedule({ scheduleId, every: '1h', cron: '0 9 * * *' }, { task: 'x' }),
      ).rejects.toThrow('give exactly one of every and cron');
      await expect(keel.createSchedule({ scheduleId, every: '90 minutes' }, { task: 'x' })).rejects.toThrow(
        'every: must be a whole number and a unit',
      );
      await expect(keel.createSchedule({ scheduleId, every: '1h' }, { task: ' ' })).rejects.toThrow(
        'Invalid run input',
      );
      await expect(
        keel.createSchedule({ scheduleId, every: '1h' }, { task: 'x', session: true }),
      ).rejects.toThrow('a scheduled run cannot be a session');
      await expect(keel.pauseSchedule(scheduleId)).rejects.toThrow(`There is no schedule ${scheduleId}`);
      try {
        await keel.createSchedule(
          { scheduleId, cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', paused: true },
          { task: 'x' },
        );
        await expect(keel.createSchedule({ scheduleId, every: '1h' }, { task: 'x' })).rejects.toThrow(
          `A schedule with id ${scheduleId} exists already`,
        );
        const listed = await listedSchedule(keel, scheduleId);
        expect(listed).toMatchObject({
          when: 'cron 0 9 * * 1-5 (Europe/Berlin)',
          paused: true,
          recentRuns: [],
        });
      } finally {
        await deleteQuietly(keel, scheduleId);
      }
    });
  });

  it('keel schedule create, list, trigger, pause and delete', async () => {
    const scheduleId = `cli-${randomUUID().slice(0, 8)}`;
    await withScenario(
      server,
      () => reply.text('Done.'),
      {},
      async ({ keel, taskQueue }) => {
        const cli = (...args: string[]) =>
          runCli(['schedule', ...args, '--task-queue', taskQueue, '--json'], {
            env: testServerCliEnvironment(),
          });
        try {
          const created = await cli(
            'create',
            scheduleId,
            'Check',
            'the',
            'queue.',
            '--cron',
            '0 3 * * *',
            '--max-turns',
            '3',
          );
          expect(created.code, created.stderr).toBe(0);
          expect(JSON.parse(created.stdout)).toEqual({ scheduleId, created: true });
          const triggered = await cli('trigger', scheduleId);
          expect(triggered.code, triggered.stderr).toBe(0);
          await until(
            async () => (await scheduledRuns(keel, scheduleId)).some((run) => run.status === 'COMPLETED'),
            'the triggered run completed',
            { timeoutMs: 60_000 },
          );
          expect((await cli('pause', scheduleId, '--note', 'maintenance')).code).toBe(0);
          const listed = await cli('list');
          const mine = (JSON.parse(listed.stdout) as { scheduleId: string }[]).find(
            (schedule) => schedule.scheduleId === scheduleId,
          );
          expect(mine).toMatchObject({
            when: 'cron 0 3 * * *',
            paused: true,
            note: 'maintenance',
            task: 'Check the queue.',
          });
          expect((await cli('delete', scheduleId)).code).toBe(0);
          const missing = await cli('delete', scheduleId);
          expect(missing.code).toBe(1);
          expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'schedule' } });
          const usage = await cli('create', scheduleId, 'x', '--every', '1h', '--cron', '* * * * *');
          expect(usage.code).toBe(2);
          expect(usage.stderr).toContain('give exactly one of every and cron');
          const stray = await cli('list', '--every', '1h');
          expect(stray.code).toBe(2);
          expect(stray.stderr).toContain('Option --every does not apply to "keel schedule list"');
        } finally {
          await deleteQuietly(keel, scheduleId);
        }
      },
    );
  });
});
