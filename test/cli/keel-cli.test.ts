import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_MAX_ATTEMPTS } from '../../src/contract/defaults.js';
import type { RunResult } from '../../src/contract/run-result.js';
import { cliEnvironment, runCli, startCli, testServerCliEnvironment } from '../support/cli.js';
import { deferred } from '../support/deferred.js';
import { freePort } from '../support/free-port.js';
import { connectTestServer, temporaryWorkspace, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { blockingTool, deployTool, echoTool } from '../support/test-tools.js';

let server: TestServer;
let environment: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterAll(async () => {
  await server?.close();
});

describe('keel usage', () => {
  it('prints help for keel and for each command', async () => {
    const top = await runCli(['--help'], { env: cliEnvironment() });
    expect(top.code).toBe(0);
    for (const command of [
      'run',
      'worker',
      'status',
      'follow',
      'result',
      'list',
      'cancel',
      'approve',
      'reject',
      'send',
      'end',
    ]) {
      expect(top.stdout).toContain(`  ${command}`);
    }
    const run = await runCli(['run', '--help'], { env: cliEnvironment() });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('--demo');
    expect(run.stdout).toContain('--detach');
  });

  it.each([
    [['frob'], 'Unknown command "frob".'],
    [['run'], 'Give the task'],
    [['status'], 'Give exactly one argument: a run id.'],
    [['list', '--bogus'], "Unknown option '--bogus'"],
    [['status', 'x', '--demo'], 'Option --demo does not apply to "keel status".'],
    [['run', 'x', '--max-turns', 'lots'], '--max-turns must be a whole number from 1 to 1000000'],
    [['approve', 'run-1'], 'Give exactly two arguments: the run id and the call id.'],
    [['approve', 'run-1', 'call-1', '--args', '[1]'], '--args must be a JSON object'],
    [['send', 'run-1'], 'Give the run id and the message'],
  ])('refuses %j with exit code 2 and says what is wrong', async (args, message) => {
    const { code, stderr } = await runCli(args, { env: cliEnvironment() });
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it('says exactly what to set when no model is configured, before starting anything', async () => {
    const nothingListening = String(await freePort());
    const { code, stderr } = await runCli(['run', 'hello'], {
      env: cliEnvironment({ KEEL_LOCAL_PORT: nothingListening }),
      cwd: await temporaryWorkspace(),
    });
    expect(code).toBe(1);
    expect(stderr).toContain('set OPENAI_API_KEY');
    expect(stderr).toContain('OPENAI_BASE_URL');
    expect(stderr).toContain('keel run --demo');
    expect(stderr).not.toContain('Starting a local Temporal server');
  });

  it('says how to get a server when none is reachable', async () => {
    const { code, stderr } = await runCli(['status', 'some-run'], {
      env: cliEnvironment({ TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    });
    expect(code).toBe(1);
    expect(stderr).toContain('127.0.0.1:1');
  });
});

describe('keel run --demo', () => {
  it('runs the whole pipeline with the scripted model and prints each step', async () => {
    const workspace = await temporaryWorkspace();
    const { code, stdout, stderr } = await runCli(['run', '--demo', 'What is in here?'], {
      env: environment,
      cwd: workspace,
    });
    expect(stderr).toContain('started with the scripted demo model');
    expect(stdout).toContain('▸ turn 1');
    expect(stdout).toContain('→ list_directory .');
    expect(stdout).toContain('✓ list_directory');
    expect(stdout).toContain('✔ completed (2 turns');
    expect(stdout).toContain('not from an AI');
    expect(code).toBe(0);
  });

  it('prints the outcome as JSON with --json', async () => {
    const { code, stdout } = await runCli(['run', '--demo', '--json', 'What is in here?'], {
      env: environment,
      cwd: await temporaryWorkspace(),
    });
    expect(code).toBe(0);
    const outcome = JSON.parse(stdout) as { runId: string; kind: string; result: RunResult };
    expect(outcome).toMatchObject({ kind: 'ended', result: { status: 'completed', turns: 2 } });
    expect(outcome.runId).toMatch(/^keel-/);
  });

  it.each([
    ['c', 'cancels the run', 3, /■ cancelled/],
    ['d', 'detaches, leaving the run be', 0, /Detached from keel-/],
  ])('on Ctrl-C asks; answered "%s" it %s', async (answer, _does, exitCode, printed) => {
    const cli = startCli(['run', '--demo', 'Take your time'], {
      env: environment,
      cwd: await temporaryWorkspace(),
    });
    await cli.waitForOutput('started with the scripted demo model');
    cli.child.kill('SIGINT');
    await cli.waitForOutput('Cancel the run (c) or detach');
    cli.child.stdin!.write(`${answer}\n`);
    expect(await cli.exited).toBe(exitCode);
    expect(cli.stdout + cli.stderr).toMatch(printed);
    // The hosted worker's warnings go to its log, the SDK core's own too ("Activity not found on
    // completion" when the cancelled model call ends after the run), never between the lines.
    expect(cli.stderr).not.toMatch(/temporalio_sdk_core|\bWARN\b/);
  });
});

describe('keel against a cluster with its own workers', () => {
  it('starts a detached run, then shows its status, result and place in the list', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'hi' } }),
      reply.text('done'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool] }, async ({ taskQueue }) => {
        const queue = ['--task-queue', taskQueue];
        const started = await runCli(['run', 'Say hi', '--detach', '--json', '--max-turns', '5', ...queue], {
          env: environment,
        });
        expect(started.code).toBe(0);
        const { runId } = JSON.parse(started.stdout) as { runId: string };

        const result = await runCli(['result', runId, '--json', ...queue], { env: environment });
        expect(result.code).toBe(0);
        expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', finalText: 'done', turns: 2 });

        const status = await runCli(['status', runId, ...queue], { env: environment });
        expect(status.stdout).toContain(`run ${runId} has ended`);
        expect(status.stdout).toContain('✔ completed (2 turns');

        const follow = await runCli(['follow', runId, ...queue], { env: environment });
        expect(follow.stdout).toContain('✔ completed');
        expect(follow.stdout).toContain('done');

        let listed: Array<{ runId: string; keelStatus: string }> = [];
        // Visibility is eventually consistent: ask until the run shows up.
        while (listed.length === 0) {
          const list = await runCli(['list', '--json', '--query', `WorkflowId = "${runId}"`, ...queue], {
            env: environment,
          });
          listed = JSON.parse(list.stdout) as typeof listed;
        }
        expect(listed).toMatchObject([{ runId, keelStatus: 'completed' }]);
      });
    } finally {
      await model.close();
    }
  });

  it('says, while it follows a run, that a model call failed and is being tried again', async () => {
    const retried = deferred();
    const model = await ScriptedModel.start([
      reply.error(500, 'the upstream model is down'),
      reply.held(reply.text('back again'), retried.promise),
    ]);
    try {
      await withTestWorker(server, { model }, async ({ taskQueue }) => {
        const cli = startCli(['run', 'Answer me', '--task-queue', taskQueue], { env: environment });
        // Said while the second attempt is still out, not only once the run has ended.
        await cli.waitForOutput('trying again');
        retried.resolve();
        expect(await cli.exited).toBe(0);
        expect(cli.stdout).toMatch(
          new RegExp(
            `^ {2}↻ the model call failed: .*the upstream model is down.*; trying again \\(attempt 2 of ${MODEL_MAX_ATTEMPTS}\\)$`,
            'mu',
          ),
        );
        expect(cli.stdout.indexOf('↻')).toBeLessThan(cli.stdout.indexOf('▸ turn 1'));
        expect(cli.stdout).toContain('✔ completed (1 turn');
      });
    } finally {
      retried.resolve();
      await model.close();
    }
  });

  it('approves and rejects calls, talks to a session and ends it', async () => {
    const deploy = deployTool();
    const model = await ScriptedModel.start([
      reply.calls(
        { name: 'echo', arguments: { text: 'from the model' } },
        { name: 'deploy', arguments: { service: 'api', replicas: 3 } },
      ),
      reply.text('Echoed; deploy refused.'),
      reply.text('Here is the next step.'),
    ]);
    try {
      await withTestWorker(server, { model, tools: [echoTool, deploy.tool] }, async ({ keel, taskQueue }) => {
        const queue = ['--task-queue', taskQueue];
        const cli = (...args: string[]) => runCli([...args, ...queue], { env: environment });
        const started = await cli('run', 'Echo, then deploy', '--detach', '--approve', 'echo', '--session');
        const runId = started.stdout.trim();

        // Wait through the client (each CLI call starts a process), then look with the CLI.
        await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
        const status = await cli('status', runId);
        expect(status.stdout).toContain('waiting for approval: echo {"text":"from the model"}');
        expect(status.stdout).toContain(`keel approve ${runId} call_1_1`);

        const approved = await cli('approve', runId, 'call_1_1', '--args', '{"text":"edited"}');
        expect(approved.code).toBe(0);
        expect(approved.stdout).toContain('Approved call_1_1 with edited arguments');

        const refused = await cli('approve', runId, 'call_1_1');
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(
          /Refused: (Call call_1_1 was already approved|No call call_1_1 waits)/,
        );

        await waitForState(keel, runId, (state) => state.pendingApprovals[0]?.name === 'deploy');
        const rejected = await cli('reject', runId, 'call_1_2', '--reason', 'frozen this week');
        expect(rejected.code).toBe(0);

        await waitForState(keel, runId, (state) => state.phase === 'idle');
        const sent = await cli('send', runId, 'What', 'next?', '--wait');
        expect(sent.code).toBe(0);
        expect(sent.stdout).toContain('Here is the next step.');

        expect((await cli('end', runId)).code).toBe(0);
        const result = await cli('result', runId, '--json');
        expect(JSON.parse(result.stdout)).toMatchObject({
          status: 'completed',
          finalText: 'Here is the next step.',
        });
        expect(deploy.ran).toEqual([]);
        expect(model.requests[1]?.body.input).toMatchObject([
          { output: '[A person approved this call with edited arguments: {"text":"edited"}]\necho: edited' },
          { output: expect.stringContaining('frozen this week') as unknown },
        ]);
        expect(model.requests[2]?.body.input).toEqual([
          { type: 'message', role: 'user', content: 'What next?' },
        ]);
        const late = await cli('send', runId, 'anyone?');
        expect(late.code).toBe(1);
        expect(late.stderr).toContain(`Run ${runId} has ended (COMPLETED): it takes no more messages`);
      });
    } finally {
      await model.close();
    }
  });

  it('cancels a run; its result then says so with exit code 3, and a second cancel is refused', async () => {
    const blocking = blockingTool();
    const model = await ScriptedModel.start([reply.calls({ name: 'block', arguments: { label: 'x' } })]);
    try {
      await withTestWorker(server, { model, tools: [blocking.tool] }, async ({ taskQueue }) => {
        const queue = ['--task-queue', taskQueue];
        const started = await runCli(['run', 'Block', '--detach', ...queue], { env: environment });
        const runId = started.stdout.trim();
        await blocking.started.promise;
        const cancel = await runCli(['cancel', runId, ...queue], { env: environment });
        expect(cancel.code).toBe(0);
        expect(await blocking.aborted.promise).toBeDefined();
        const result = await runCli(['result', runId, ...queue], { env: environment });
        expect(result.code).toBe(3);
        expect(result.stderr).toContain('did not end with a result');
        // Once it has ended, a cancel is not "requested": it is refused, saying why.
        const again = await runCli(['cancel', runId, ...queue], { env: environment });
        expect(again.code).toBe(1);
        expect(again.stdout + again.stderr).toContain(
          `Run ${runId} has already ended (CANCELLED): there is nothing to cancel`,
        );
        expect(again.stdout + again.stderr).not.toContain('Cancel requested');
      });
    } finally {
      await model.close();
    }
  });
});
