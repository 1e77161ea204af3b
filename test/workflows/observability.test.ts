import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { workflowMetadataQuery } from '@temporalio/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunState } from '../../src/contract/run-state.js';
import { keelModel, keelStatus, keelTokens, keelTurns } from '../../src/workflows/search-attributes.js';
import { connectTestServer, TEST_API_KEY, temporaryWorkspace, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents, historyText } from '../support/history.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe('what a run shows about itself', () => {
  let runId = '';
  let totalTokens = 0;
  let summaries: string[] = [];
  let details = '';
  let states: RunState;

  beforeAll(async () => {
    const workspace = await temporaryWorkspace();
    await writeFile(path.join(workspace, 'notes.txt'), 'hello\n');
    const model = await ScriptedModel.start([
      reply.calls({ name: 'read_file', arguments: { path: 'notes.txt', startLine: null, endLine: null } }),
      reply.text('The notes say hello.'),
    ]);
    try {
      await withTestWorker(server, { model, workspace }, async ({ keel }) => {
        runId = await keel.startRun({ task: 'Summarise the notes\nThey are in notes.txt.' });
        const result = await keel.waitForResult(runId);
        totalTokens = result.usage.totalTokens;
        states = await keel.getRunState(runId);
        const metadata = await server.client.workflow.getHandle(runId).query(workflowMetadataQuery);
        details = metadata.currentDetails ?? '';
      });
    } finally {
      await model.close();
    }
    summaries = (await historyEvents(server.client, runId))
      .filter((event) => event.activityTaskScheduledEventAttributes)
      .map((event) => defaultPayloadConverter.fromPayload<string>(event.userMetadata!.summary!));
  });

  it('has the first line of the task as its summary', async () => {
    expect(
      await server.client.workflow
        .getHandle(runId)
        .describe()
        .then((d) => d.staticSummary()),
    ).toBe('Summarise the notes');
  });

  it('labels every activity: loading tools, each model turn, each tool call with its argument', () => {
    expect(summaries).toEqual(['load tools', 'model turn 1', 'read_file notes.txt', 'model turn 2']);
  });

  it('keeps its current details up to date: status, turn, last tool, tokens', () => {
    expect(details).toContain('**completed** · turn 2 of 20 · model scripted-model');
    expect(details).toContain('Last tool: `read_file` → ok');
    expect(details).toContain(`Tokens: ${totalTokens}`);
  });

  it('sets the Keel search attributes', async () => {
    const { typedSearchAttributes } = await server.client.workflow.getHandle(runId).describe();
    expect(typedSearchAttributes.get(keelStatus)).toBe('completed');
    expect(typedSearchAttributes.get(keelModel)).toBe('scripted-model');
    expect(typedSearchAttributes.get(keelTurns)).toBe(2);
    expect(typedSearchAttributes.get(keelTokens)).toBe(totalTokens);
  });

  it('can be found by its search attributes', async () => {
    const query = `KeelStatus = "completed" AND KeelTurns = 2 AND WorkflowId = "${runId}"`;
    const found: string[] = [];
    // Visibility is eventually consistent: ask until the run shows up.
    while (found.length === 0) {
      for await (const execution of server.client.workflow.list({ query })) found.push(execution.workflowId);
    }
    expect(found).toEqual([runId]);
  });

  it('records each turn and observation as numbered events in its state', () => {
    expect(states.events.map((event) => [event.seq, event.kind])).toEqual([
      [0, 'turn'],
      [1, 'observation'],
      [2, 'turn'],
    ]);
    expect(states.events[0]).toMatchObject({
      calls: [{ name: 'read_file', summary: 'read_file notes.txt' }],
    });
    expect(states.events[1]).toMatchObject({ name: 'read_file', ok: true, preview: 'hello' });
    expect(states.events[2]).toMatchObject({ text: 'The notes say hello.' });
  });

  it('shows no secret in any of it', async () => {
    const everything = [
      details,
      JSON.stringify(summaries),
      JSON.stringify(states),
      await historyText(server.client, runId),
    ];
    for (const text of everything) expect(text).not.toContain(TEST_API_KEY);
  });
});

describe("the worker's run limits", () => {
  it("apply to runs that set none, and a run's own limit wins over them", async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'a' } }),
      reply.calls({ name: 'echo', arguments: { text: 'b' } }),
      reply.calls({ name: 'echo', arguments: { text: 'c' } }),
    ]);
    try {
      await withTestWorker(
        server,
        { model, tools: [echoTool], limits: { maxTurns: 1 } },
        async ({ keel }) => {
          expect(await keel.waitForResult(await keel.startRun({ task: 'worker limit' }))).toMatchObject({
            status: 'max_turns',
            turns: 1,
          });
          expect(
            await keel.waitForResult(await keel.startRun({ task: 'own limit', maxTurns: 2 })),
          ).toMatchObject({
            status: 'max_turns',
            turns: 2,
          });
        },
      );
      model.assertDone();
    } finally {
      await model.close();
    }
  });
});
