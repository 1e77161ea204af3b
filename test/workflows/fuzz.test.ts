import { randomUUID } from 'node:crypto';
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AGENT_RUN_WORKFLOW } from '../../src/contract/defaults.js';
import { STOPPED_FAILURE_TYPES } from '../../src/contract/failure-type.js';
import { RunInput } from '../../src/contract/run-input.js';
import type { RunState } from '../../src/contract/run-state.js';
import { Fuzz, PROTOTYPE_KEYS } from '../support/fuzz.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import type { HistoryEvent } from '../support/history.js';
import { waitForState } from '../support/run-state.js';
import { reply } from '../support/scripted-model.js';
import type { RecordedRequest, ScriptStep } from '../support/scripted-model.js';
import { withScenario } from '../support/scenario.js';
import { hasCompletedWorkflowTask, settle } from '../support/settle.js';
import type { Settled } from '../support/settle.js';
import { deployTool, echoTool } from '../support/test-tools.js';

/** The seed: set KEEL_FUZZ_SEED to reproduce a failure, KEEL_FUZZ_RUNS for a longer run. */
const SEED = Number(process.env.KEEL_FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.KEEL_FUZZ_RUNS ?? 48);
const MESSAGES = Number(process.env.KEEL_FUZZ_MESSAGES ?? 60);
/** Generous, for a loaded machine: a refused run closes in its first workflow task, milliseconds of work. */
const CLOSE_BOUND_MS = 30_000;

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Values that make a field valid, so that some fuzzed runs pass validation and really run. */
const VALID: Record<string, unknown[]> = {
  task: ['Echo something, then answer.'],
  model: ['scripted-model'],
  tools: [['echo'], []],
  toolTimeouts: [{ echo: 5 }],
  parallelToolCalls: [true, false],
  session: [true],
  idleTimeoutSeconds: [1],
  conversation: ['stateless', 'chained'],
  continueAsNewAfterTurns: [1],
  approvalTools: [['echo']],
  maxTurns: [1, 2],
  maxTotalTokens: [150],
  maxDurationSeconds: [30],
  heartbeatTimeoutSeconds: [5],
};

/** A run input: a valid one with a few fields set to valid or hostile values, or something else entirely. */
function fuzzedInput(fuzz: Fuzz): unknown {
  if (fuzz.chance(0.1)) return fuzz.value();
  const input: Record<string, unknown> = { task: 'Echo something, then answer.', maxTurns: 3 };
  const fields = [...Object.keys(RunInput.shape), ...PROTOTYPE_KEYS, 'colour'];
  for (let count = fuzz.int(4); count > 0; count--) {
    // Mostly fields the run knows, so that a fair share of the runs passes validation and runs.
    const field = fuzz.chance(0.8) ? fuzz.pick(Object.keys(VALID)) : fuzz.pick(fields);
    const valid = Object.hasOwn(VALID, field) ? VALID[field] : undefined;
    const value = valid !== undefined && fuzz.chance(0.75) ? fuzz.pick(valid) : fuzz.value();
    Object.defineProperty(input, field, { value, enumerable: true, writable: true, configurable: true });
  }
  return input;
}

/** The arguments of one start: mostly one input, sometimes none, several, or carried-state look-alikes. */
function fuzzedArguments(fuzz: Fuzz): unknown[] {
  const input = fuzzedInput(fuzz);
  return fuzz.pick([
    () => [input],
    () => [input],
    () => [input],
    () => [input],
    () => [input],
    () => [],
    () => [input, fuzzedInput(fuzz)],
    () => [input, null],
    () => [input, fuzz.value()],
    () => [input, { turn: 1, queue: [], next: { kind: 'task' }, ...fuzz.object(1) }],
    () => [input, null, fuzz.value()],
    () => [[input]],
  ])();
}

/** Whether the arguments are ones a run can use, by the published contract alone. */
function usable(args: unknown[]): boolean {
  const [first, ...rest] = args;
  return RunInput.safeParse(first).success && rest.every((arg) => arg === null || arg === undefined);
}

/** A hostile model: calls tools named after Object.prototype members with broken arguments, then answers. */
function hostileModel(request: RecordedRequest): ScriptStep {
  if (request.body.input.some((item) => item.type === 'function_call_output')) return reply.text('Done.');
  return reply.calls(
    { name: 'constructor', arguments: '{"text":' },
    { name: 'echo', arguments: { text: 'hi', __proto__: { polluted: true } } },
    { name: 'toString', arguments: {} },
  );
}

/** Message arguments that can be right, so that some fuzzed messages are taken. */
const WELL_FORMED: Array<[string, unknown]> = [
  ['send', { text: 'a message' }],
  ['approve', { callId: 'call_1_1' }],
  ['reject', { callId: 'call_1_1', reason: 'no' }],
  ['state', null],
];

/** Workflow tasks the execution ran (completed or failed). */
function workflowTasks(events: readonly HistoryEvent[]): number {
  const { EventType } = proto.temporal.api.enums.v1;
  return events.filter(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED ||
      event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  ).length;
}

function isOpenWaiting(state: RunState): boolean {
  return state.phase === 'idle' || state.phase === 'awaiting_approval';
}

describe('fuzzing agentRun', () => {
  it(`ends every run started with fuzzed arguments promptly, never with a failed workflow task (seed ${SEED}, 3 fixed and ${RUNS} fuzzed runs)`, async () => {
    const fuzz = new Fuzz(SEED);
    const cases = [
      // The issue's case, and runs that continue as new, so that real carried state is parsed too.
      [{ task: 'x' }, { task: 'y' }],
      [{ task: 'Echo, then answer.', continueAsNewAfterTurns: 1 }],
      [{ task: 'Echo, then answer.', continueAsNewAfterTurns: 1, conversation: 'stateless', session: true }],
      ...Array.from({ length: RUNS }, () => fuzzedArguments(fuzz)),
    ];
    await withScenario(
      server,
      hostileModel,
      { tools: [echoTool], allStepsUsed: false },
      async ({ taskQueue, keel }) => {
        const outcomes: Array<{ index: number; usable: boolean; settled: Settled }> = [];
        const wedged: Array<{ index: number; error: string }> = [];
        // A few at a time: the machine is shared, and every run must be watched to its end anyway.
        for (let start = 0; start < cases.length; start += 8) {
          const batch = cases.slice(start, start + 8).map(async (args, offset) => {
            const index = start + offset;
            const workflowId = `fuzz-${SEED}-${index}-${randomUUID()}`;
            const { firstExecutionRunId: firstRunId } = await server.client.workflow.start(
              AGENT_RUN_WORKFLOW,
              {
                taskQueue,
                workflowId,
                args,
              },
            );
            // A session idles and an approval waits for ever: a run that got there is alive, so cancel it.
            const settled = await settle(server.client, workflowId, {
              firstRunId,
              whileOpen: async (events) => {
                if (!hasCompletedWorkflowTask(events)) return;
                const state = await keel.getRunState(workflowId).catch(() => undefined);
                if (state !== undefined && isOpenWaiting(state)) await keel.cancelRun(workflowId);
              },
            });
            return { index, usable: usable(args), settled };
          });
          // Every run of the batch is watched to its end, so that one wedged run does not hide another.
          for (const [offset, result] of (await Promise.allSettled(batch)).entries()) {
            if (result.status === 'fulfilled') outcomes.push(result.value);
            else wedged.push({ index: start + offset, error: String(result.reason) });
          }
        }
        expect(
          wedged.map(({ index, error }) => ({ args: JSON.stringify(cases[index]).slice(0, 300), error })),
        ).toEqual([]);
        const summary = (outcome: (typeof outcomes)[number]) => ({
          index: outcome.index,
          usable: outcome.usable,
          keys: (cases[outcome.index] as unknown[]).map((arg) =>
            typeof arg === 'object' && arg !== null ? Reflect.ownKeys(arg).map(String) : typeof arg,
          ),
          args: JSON.stringify(cases[outcome.index]).slice(0, 300),
          status: outcome.settled.status,
          type: outcome.settled.failureType,
          message: outcome.settled.failureMessage?.slice(0, 300),
        });
        const wrong = outcomes.filter(({ usable: ok, settled }) =>
          ok
            ? !['COMPLETED', 'CANCELED'].includes(settled.status) &&
              settled.failureType !== 'KeelError.InvalidInput' &&
              // A run that stopped at a limit fails, typed (the hostile model may call tools to the end).
              !(STOPPED_FAILURE_TYPES as readonly (string | undefined)[]).includes(settled.failureType)
            : settled.status !== 'FAILED' ||
              settled.failureType !== 'KeelError.InvalidInput' ||
              !settled.failureNonRetryable,
        );
        expect(wrong.map(summary)).toEqual([]);
        const refused = outcomes.filter(({ usable: ok }) => !ok);
        const slowest = Math.max(...refused.map(({ settled }) => settled.closedAfterMs));
        const tally = new Map<string, number>();
        for (const { settled } of outcomes) {
          const key = `${settled.status}${settled.failureType ? ` ${settled.failureType}` : ''}`;
          tally.set(key, (tally.get(key) ?? 0) + 1);
        }
        const continued = outcomes.filter(({ settled }) => settled.executions > 1).length;
        console.log(
          `fuzz seed ${SEED}: ${outcomes.length} runs, ${refused.length} with unusable arguments, ${continued} continued as new; ` +
            `outcomes ${JSON.stringify(Object.fromEntries(tally))}; slowest refusal closed ${slowest} ms after its start`,
        );
        expect(slowest).toBeLessThan(CLOSE_BOUND_MS);
        // At once means in the first workflow task: nothing scheduled, no task retried.
        expect(
          refused
            .map(({ index, settled }) => ({ index, tasks: workflowTasks(settled.events) }))
            .filter(({ tasks }) => tasks !== 1),
        ).toEqual([]);
        // Both sides were reached: runs that ran, and runs that were refused.
        expect(outcomes.filter(({ usable: ok }) => ok).length).toBeGreaterThan(0);
        expect(refused.length).toBeGreaterThan(0);
      },
    );
  });

  it(`keeps a live run answering fuzzed signals, updates and queries, and refuses every update for good (seed ${SEED})`, async () => {
    const fuzz = new Fuzz(SEED + 1);
    const deploy = deployTool();
    const names = ['send', 'approve', 'reject', 'endSession', 'cancel', 'state', 'x', ...PROTOTYPE_KEYS];
    await withScenario(
      server,
      (request) =>
        request.index === 0
          ? reply.calls({ name: 'deploy', arguments: { service: 'api', replicas: 1 } })
          : reply.text(`answer ${request.index}`),
      { tools: [deploy.tool, echoTool], allStepsUsed: false },
      async ({ keel }) => {
        const runId = await keel.startRun({
          task: 'Deploy, then answer messages.',
          session: true,
          maxTurns: 50,
        });
        const handle = server.client.workflow.getHandle(runId);
        await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
        const unknownSignals: string[] = [];
        const updateFailures: Array<{ name: string; type?: string; nonRetryable?: boolean }> = [];
        let accepted = 0;
        for (let index = 0; index < MESSAGES; index++) {
          const well = fuzz.chance(0.25) ? fuzz.pick(WELL_FORMED) : undefined;
          const name = well?.[0] ?? fuzz.pick(names);
          let args = (
            well !== undefined
              ? [well[1]]
              : Array.from({ length: fuzz.int(3) }, () =>
                  fuzz.chance(0.5)
                    ? fuzz.object(1, ['text', 'callId', 'arguments', 'reason', 'note'])
                    : fuzz.value(1),
                )
          ) as [unknown];
          // A valid endSession would end the run this test talks to: keep that one malformed.
          if (name === 'endSession' && args.every((arg) => arg === null)) args = [{ now: true }];
          const kind = fuzz.pick(['signal', 'update', 'query'] as const);
          if (kind === 'signal') {
            await handle.signal(name, ...args);
            if (!['send', 'approve', 'reject', 'endSession'].includes(name)) unknownSignals.push(name);
          } else if (kind === 'update') {
            const outcome = await handle.executeUpdate(name, { args }).then(
              () => undefined,
              (error: unknown) => error,
            );
            if (outcome === undefined) accepted += 1;
            else {
              expect(outcome).toBeInstanceOf(WorkflowUpdateFailedError);
              const cause = (outcome as WorkflowUpdateFailedError).cause;
              expect(cause).toBeInstanceOf(ApplicationFailure);
              const failure = cause as ApplicationFailure;
              updateFailures.push({
                name,
                type: failure.type ?? undefined,
                nonRetryable: failure.nonRetryable === true,
              });
            }
          } else {
            // A query can fail (an unknown name), but it cannot change the run.
            await handle.query(name, ...args).catch(() => undefined);
          }
        }
        expect(updateFailures.filter((failure) => failure.nonRetryable !== true)).toEqual([]);
        const state = await keel.getRunState(runId);
        const refusedSignals = state.events.flatMap((event) =>
          event.kind === 'refused' ? [event.signal] : [],
        );
        // Every signal with a name Keel does not take left a visible trace (the four it takes may too).
        for (const name of new Set(unknownSignals)) {
          expect(refusedSignals.filter((signal) => signal === name).length, name).toBe(
            unknownSignals.filter((signal) => signal === name).length,
          );
        }
        // The run still works: it answers a message, it ends when asked, and no workflow task ever failed.
        if ((await keel.getRunState(runId)).pendingApprovals.length > 0)
          await keel.approveCall(runId, 'call_1_1');
        const before = await waitForState(keel, runId, (state) => state.phase === 'idle');
        await keel.sendMessage(runId, 'Still there?');
        await waitForState(keel, runId, (state) => state.answers > before.answers && state.phase === 'idle');
        await keel.cancelRun(runId);
        const settled = await settle(server.client, runId);
        expect(['CANCELED', 'COMPLETED']).toContain(settled.status);
        console.log(
          `fuzz seed ${SEED + 1}: ${MESSAGES} messages; ${unknownSignals.length} unknown signals, all refused visibly; ` +
            `${accepted} updates accepted, ${updateFailures.length} refused, all non-retryable; run ended ${settled.status}`,
        );
        // And what the fuzzing left in history replays against the same code: the handling is deterministic.
        await Worker.runReplayHistory(
          { workflowBundle: { codePath: inject('workflowBundlePath') } },
          await handle.fetchHistory(),
          runId,
        );
      },
    );
  });
});
