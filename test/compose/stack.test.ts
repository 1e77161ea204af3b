import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { waitForState } from '../support/run-state.js';
import { ComposeStack, until } from './support/stack.js';

// docker-compose.yml as users run it (with the upstream images' local stand-ins, CONTRIBUTING.md,
// "The compose tier"): the stack comes up from nothing, a run goes through the stack's own Keel
// container while that container's worker crashes and the server and database containers restart,
// and a second `up` after `down` still has the run.
let stack: ComposeStack;
let model: ScriptedModel;

beforeAll(async () => {
  stack = await ComposeStack.prepare();
  // The database first: it makes the project's network, whose gateway is where containers reach
  // the scripted model on this host.
  await stack.up(['postgresql']);
  model = await ScriptedModel.start(
    [
      reply.calls({ name: 'write_file', arguments: { path: 'answer.txt', content: 'forty-two\n' } }),
      reply.calls({ name: 'read_file', arguments: { path: 'notes.txt' } }),
      reply.text('Wrote answer.txt; the notes say the stack keeps its runs.'),
    ],
    { host: await stack.gateway() },
  );
  stack.environment.OPENAI_BASE_URL = model.url;
  try {
    await stack.up();
    await stack.ready();
  } catch (error) {
    console.error(`The stack did not come up:\n${await stack.podman('ps', '-a')}\n${await stack.logs()}`);
    throw error;
  }
}, 1_800_000);

afterAll(async () => {
  await stack?.remove();
  await model?.close();
}, 300_000);

describe('the compose stack', () => {
  it('completes a run while its worker crashes and the server and database restart', async () => {
    onTestFailed(async () => {
      console.error(`The stack's containers:\n${await stack.podman('ps', '-a')}\n${await stack.logs()}`);
    });
    const keel = new KeelClient(await stack.client(), 'keel');
    const runId = await keel.startRun({
      task: 'Write the answer, then read the notes.',
      approvalTools: ['write_file'],
    });
    // A durable wait: the write waits for a person while the stack is shaken.
    const waiting = await waitForState(
      keel,
      runId,
      (state) => state.pendingApprovals.length === 1 || state.phase === 'finished',
    );
    if (waiting.phase === 'finished')
      throw new Error(
        `The run ended before its call waited: ${JSON.stringify(await keel.waitForResult(runId))}`,
      );
    const callId = waiting.pendingApprovals[0]!.callId;

    const crashesBefore = await stack.restarts('keel');
    await stack.crashWorker();
    await until(
      async () => (await stack.restarts('keel')) > crashesBefore,
      'Podman restarts the keel container',
    );
    await stack.podman('restart', stack.container('temporal'));
    await stack.podman('restart', stack.container('postgresql'));
    await stack.ready();

    await keel.approveCall(runId, callId);
    const result = await keel.waitForResult(runId);
    expect(result).toMatchObject({
      status: 'completed',
      finalText: 'Wrote answer.txt; the notes say the stack keeps its runs.',
    });
    // Each call's observation reached the model: the write's (in the run's own workspace, a copy
    // of the host's), and the read's, which saw the host's file.
    expect(model.requests).toHaveLength(3);
    expect(JSON.stringify(model.requests[1]!.body)).toContain('answer.txt');
    expect(JSON.stringify(model.requests[2]!.body)).toContain('The stack keeps its runs.');
    model.assertDone();

    // The Web UI's server shows the run, from the server, as it ended.
    await until(async () => {
      const described = (await stack.fromUi(`/api/v1/namespaces/default/workflows/${runId}`)) as {
        workflowExecutionInfo?: { status?: string; type?: { name?: string } };
      };
      // Temporal's HTTP API names the enum in full or by its short name, depending on the version.
      return (
        /^(WORKFLOW_EXECUTION_STATUS_)?COMPLETED$/i.test(described.workflowExecutionInfo?.status ?? '') &&
        described.workflowExecutionInfo?.type?.name === 'agentRun'
      );
    }, 'the Web UI shows the run completed');

    // `down` keeps the volumes; the next `up` has the run.
    await stack.down();
    expect(await stack.containers()).toEqual([]);
    await stack.up();
    await stack.ready();
    expect(await new KeelClient(await stack.client(), 'keel').waitForResult(runId)).toEqual(result);
  });

  it('runs the image as its own user, refuses a missing setting, and sandboxes run_command', async () => {
    onTestFailed(async () => {
      console.error(`The stack's containers:\n${await stack.podman('ps', '-a')}\n${await stack.logs()}`);
    });
    // The worker's user owns its state and the runs' workspaces, and nothing of the application.
    const owners = await stack.podman(
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      stack.keelImage,
      '-c',
      'id -un; stat -c "%U %n" /app /app/dist /app/node_modules /var/lib/keel /var/lib/keel-workspaces /workspace',
    );
    expect(owners.trim().split('\n')).toEqual([
      'node',
      'root /app',
      'root /app/dist',
      'root /app/node_modules',
      'node /var/lib/keel',
      'node /var/lib/keel-workspaces',
      'node /workspace',
    ]);

    // A required setting missing: the worker says which and exits, without starting.
    const network = `${stack.project}_default`;
    const missing = await stack
      .podman('run', '--rm', '--network', network, '-e', 'TEMPORAL_ADDRESS=temporal:7233', stack.keelImage)
      .then(
        () => 'started',
        (error: { stderr?: string; stdout?: string; code?: number }) =>
          `${error.stdout ?? ''}${error.stderr ?? ''}`,
      );
    expect(missing).toContain('OPENAI_API_KEY');

    // run_command without the security options docs/safety.md names: the worker refuses to start,
    // with bubblewrap's reason, before it connects anywhere.
    const unsandboxable = await stack
      .podman(
        'run',
        '--rm',
        '-e',
        'OPENAI_API_KEY=sk-unused',
        '-e',
        'KEEL_RUN_COMMAND_ALLOW=sh',
        '-e',
        'TEMPORAL_ADDRESS=127.0.0.1:1',
        stack.keelImage,
      )
      .then(
        () => 'started',
        (error: { stderr?: string; stdout?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
      );
    expect(unsandboxable).toContain('commands cannot be sandboxed on this machine');
    expect(unsandboxable).toContain('--security-opt seccomp=unconfined');

    // With them, the worker proves the sandbox at start, and a command sees no secret of the worker's.
    const sandboxModel = await ScriptedModel.start(
      [
        reply.calls({
          name: 'run_command',
          arguments: {
            program: 'sh',
            args: [
              '-c',
              'echo "uid $(id -u)"; cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n" | grep -c OPENAI_API_KEY; true',
            ],
          },
        }),
        reply.text('Ran it.'),
      ],
      { host: await stack.gateway() },
    );
    const name = `${stack.project}_sandboxed`;
    try {
      await stack.podman(
        'run',
        '-d',
        '--name',
        name,
        '--network',
        network,
        '--init',
        '--security-opt',
        'seccomp=unconfined',
        '--security-opt',
        'apparmor=unconfined',
        '--security-opt',
        'systempaths=unconfined',
        '-e',
        'TEMPORAL_ADDRESS=temporal:7233',
        '-e',
        'KEEL_TASK_QUEUE=keel-sandboxed',
        '-e',
        `OPENAI_API_KEY=${stack.environment.OPENAI_API_KEY}`,
        '-e',
        `OPENAI_BASE_URL=${sandboxModel.url}`,
        '-e',
        'KEEL_RUN_COMMAND_ALLOW=sh,echo,id,cat,tr,grep',
        stack.keelImage,
      );
      const keel = new KeelClient(await stack.client(), 'keel-sandboxed');
      const runId = await keel.startRun({ task: 'Run it.', tools: ['run_command'] });
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'Ran it.' });
      const observation = JSON.stringify(sandboxModel.requests[1]!.body);
      expect(observation).toContain('uid 1000');
      expect(observation).toMatch(/uid 1000\\n0\\n/);
      sandboxModel.assertDone();
    } finally {
      await sandboxModel.close();
      await stack.podman('rm', '-f', name).catch(() => undefined);
    }
  });
});
