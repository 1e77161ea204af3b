import type { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RunUpdateRefusedError } from '../../src/client.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { keelStatus } from '../../src/workflows/search-attributes.js';
import { connectTestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import type { ScriptedModel } from '../support/scripted-model.js';
import { reply } from '../support/scripted-model.js';
import { deployTool, echoTool } from '../support/test-tools.js';
import { workflowMetadataQuery } from '@temporalio/workflow';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A file writer that needs approval only outside `drafts/`. */
function guardedWriteTool() {
  const written: string[] = [];
  const tool = defineTool({
    name: 'guarded_write',
    description: 'Write a file.',
    schema: z.object({ path: z.string(), text: z.string() }),
    needsApproval: ({ path }) => !path.startsWith('drafts/'),
    execute: ({ path }) => {
      written.push(path);
      return `wrote ${path}`;
    },
  });
  return { tool, written };
}

function outputs(model: ScriptedModel, index: number): unknown[] {
  return (model.requests[index]?.body.input ?? []).map((item) => item.output);
}

describe('human approval', () => {
  it('pauses before a call that needs approval, shows it, refuses bad updates and runs the edited call', async () => {
    const deploy = deployTool();
    await withScenario(
      server,
      [reply.calls({ name: 'deploy', arguments: { service: 'api', replicas: 50 } }), reply.text('Deployed.')],
      { tools: [deploy.tool] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'Deploy the api' });
        const waiting = await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
        expect(waiting.phase).toBe('awaiting_approval');
        expect(waiting.pendingApprovals[0]).toEqual({
          callId: 'call_1_1',
          name: 'deploy',
          argumentsPreview: '{"service":"api","replicas":50}',
          turn: 1,
        });
        expect(deploy.ran).toEqual([]);
        const handle = server.client.workflow.getHandle(runId);
        expect((await handle.query(workflowMetadataQuery)).currentDetails).toContain(
          '**Waiting for approval:** `deploy` {"service":"api","replicas":50}',
        );
        expect((await handle.describe()).typedSearchAttributes.get(keelStatus)).toBe('awaiting_approval');

        // Refused by the validator: nothing changes, the call still waits.
        await expect(keel.approveCall(runId, 'call_9_9')).rejects.toThrow(
          new RunUpdateRefusedError('No call call_9_9 waits for approval; waiting: call_1_1 (deploy)'),
        );
        await expect(
          keel.approveCall(runId, 'call_1_1', { arguments: { service: 'api', replicas: 'three' } }),
        ).rejects.toThrow(/The edited arguments for deploy are invalid:\nreplicas: .*number/);
        await expect(
          keel.approveCall(runId, 'call_1_1', { arguments: { service: 'api', replicas: 3, force: true } }),
        ).rejects.toThrow(RunUpdateRefusedError);
        expect((await keel.getRunState(runId)).pendingApprovals).toHaveLength(1);

        expect(
          await keel.approveCall(runId, 'call_1_1', {
            arguments: { service: 'api', replicas: 3 },
            note: 'too many',
          }),
        ).toEqual({ callId: 'call_1_1', decision: 'approved' });
        await expect(keel.approveCall(runId, 'call_1_1')).rejects.toThrow(
          /already approved|No call call_1_1/,
        );
        const result = await keel.waitForResult(runId);
        expect(result).toMatchObject({ status: 'completed', finalText: 'Deployed.', toolCalls: 1 });
        expect(deploy.ran).toEqual([{ service: 'api', replicas: 3 }]);
        expect(outputs(model, 1)).toEqual([
          '[A person approved this call with edited arguments: {"service":"api","replicas":3} (too many)]\ndeployed api x3',
        ]);
        const events = (await keel.getRunState(runId)).events.filter((event) => event.kind === 'approval');
        expect(events.map((event) => event.kind === 'approval' && event.decision)).toEqual([
          'requested',
          'edited',
        ]);
      },
    );
  });

  it('tells the model why a call was rejected, and never runs it', async () => {
    const deploy = deployTool();
    await withScenario(
      server,
      [
        reply.calls({ name: 'deploy', arguments: { service: 'db', replicas: 1 } }),
        reply.text('Understood, not deploying.'),
      ],
      { tools: [deploy.tool] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'Deploy the db' });
        await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
        expect(await keel.rejectCall(runId, 'call_1_1', 'the database is frozen this week')).toEqual({
          callId: 'call_1_1',
          decision: 'rejected',
        });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', toolCalls: 1 });
        expect(deploy.ran).toEqual([]);
        expect(JSON.parse(outputs(model, 1)[0] as string)).toEqual({
          error: 'rejected',
          message:
            'A person reviewed this call and rejected it, so it was not run. Their reason: the database is frozen this week',
        });
      },
    );
  });

  it('asks a conditional tool per call, runs malformed calls past nobody, and lets a run require approval for any tool', async () => {
    const guarded = guardedWriteTool();
    await withScenario(
      server,
      [
        reply.calls(
          { name: 'guarded_write', arguments: { path: 'drafts/a.md', text: 'x' } },
          { name: 'guarded_write', arguments: { path: 'README.md', text: 'y' } },
          { name: 'guarded_write', arguments: { path: 42 } },
          { name: 'echo', arguments: { text: 'hi' } },
        ),
        reply.text('ok'),
      ],
      { tools: [guarded.tool, echoTool] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'write', approvalTools: ['echo'] });
        const first = await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
        // drafts/ needed no approval and already ran; README.md waits.
        expect(guarded.written).toEqual(['drafts/a.md']);
        expect(first.pendingApprovals[0]).toMatchObject({ callId: 'call_1_2', name: 'guarded_write' });
        await keel.approveCall(runId, 'call_1_2');
        // The malformed call got its observation without anyone asked; echo waits because the run said so.
        const second = await waitForState(
          keel,
          runId,
          (state) => state.pendingApprovals.length === 1 && state.pendingApprovals[0]!.name === 'echo',
        );
        expect(second.pendingApprovals[0]?.callId).toBe('call_1_4');
        await keel.approveCall(runId, 'call_1_4');
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', toolCalls: 4 });
        expect(guarded.written).toEqual(['drafts/a.md', 'README.md']);
        const results = outputs(model, 1) as string[];
        expect(results[0]).toBe('wrote drafts/a.md');
        expect(results[1]).toBe('wrote README.md');
        expect(JSON.parse(results[2]!)).toMatchObject({ error: 'invalid_arguments' });
        expect(results[3]).toBe('echo: hi');
      },
    );
  });

  it('refuses a run that asks approval for a tool the worker does not have', async () => {
    await withScenario(server, [], { tools: [echoTool] }, async ({ keel, model }) => {
      const error = await keel
        .waitForResult(await keel.startRun({ task: 'x', approvalTools: ['deploy'] }))
        .catch((caught: unknown) => caught);
      expect((error as WorkflowFailedError).cause?.message).toBe(
        'Invalid run input:\napprovalTools: unknown tool(s) deploy; this worker has echo',
      );
      expect(model.requests).toHaveLength(0);
    });
  });

  it('gives up on an approval after approvalTimeoutSeconds and tells the model', async () => {
    const deploy = deployTool();
    await withScenario(
      server,
      [
        reply.calls({ name: 'deploy', arguments: { service: 'api', replicas: 1 } }),
        reply.text('Nobody answered.'),
      ],
      { tools: [deploy.tool] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'deploy', approvalTimeoutSeconds: 1 });
        expect(await keel.waitForResult(runId)).toMatchObject({
          status: 'completed',
          finalText: 'Nobody answered.',
        });
        expect(deploy.ran).toEqual([]);
        expect(JSON.parse(outputs(model, 1)[0] as string)).toEqual({
          error: 'approval_timeout',
          message: 'Nobody approved this call within 1 seconds, so it was not run.',
        });
        await expect(keel.approveCall(runId, 'call_1_1')).rejects.toThrow(
          new RunUpdateRefusedError(`Run ${runId} has ended`),
        );
      },
    );
  });
});
