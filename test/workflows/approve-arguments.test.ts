import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/tools/define-tool.js';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';

let server: TestServer;
let environment: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterAll(async () => {
  await server?.close();
});

describe('keel approve --args', () => {
  it('takes edited arguments without the optional fields, and names the field and its type when refusing', async () => {
    await withScenario(
      server,
      [
        reply.calls({ name: 'read_file', arguments: { path: 'notes.txt', startLine: null, endLine: null } }),
        reply.text('Read it.'),
      ],
      {},
      async ({ keel, taskQueue, workspace, model }) => {
        await writeFile(path.join(workspace, 'notes.txt'), 'the model asked for this\n');
        await writeFile(path.join(workspace, 'other.txt'), 'a person chose this\n');
        const cli = (...args: string[]) => runCli([...args, '--task-queue', taskQueue], { env: environment });
        const runId = await keel.startRun({ task: 'Read the notes', approvalTools: ['read_file'] });
        await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);

        const wrong = await cli(
          'approve',
          runId,
          'call_1_1',
          '--args',
          '{"path":"other.txt","startLine":"x"}',
        );
        expect(wrong.code).toBe(1);
        expect(wrong.stderr).toContain('startLine: expected a whole number or null, got "x"');
        const missing = await cli('approve', runId, 'call_1_1', '--args', '{"startLine":2}');
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain('path: missing; expected a string');

        const approved = await cli('approve', runId, 'call_1_1', '--args', '{"path":"other.txt"}');
        expect(approved.code, approved.stderr).toBe(0);
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'Read it.' });
        // The tool ran with what the person gave, its optional fields as the model would send them.
        expect(model.requests[1]?.body.input).toEqual([
          expect.objectContaining({
            call_id: 'call_1_1',
            output:
              '[A person approved this call with edited arguments: {"path":"other.txt","startLine":null,"endLine":null}]\n' +
              'a person chose this\n',
          }),
        ]);
      },
    );
  });
});

describe('approving with edited arguments for a schema beyond what the workflow checks', () => {
  // `format` (here from `.url()`) is one of the keywords the workflow's plans leave to the executor.
  const openPage = defineTool({
    name: 'open_page',
    description: 'Opens a page.',
    schema: z.object({ url: z.string().url() }),
    readOnly: true,
    execute: ({ url }) => Promise.resolve(`opened ${url}`),
  });

  it('takes them, and the call then fails with an observation that says what was wrong', async () => {
    await withScenario(
      server,
      [
        reply.calls({ name: 'open_page', arguments: { url: 'https://example.com/' } }),
        reply.text('Could not.'),
      ],
      { tools: [openPage] },
      async ({ keel, model }) => {
        const runId = await keel.startRun({ task: 'Open the page', approvalTools: ['open_page'] });
        await waitForState(keel, runId, (state) => state.pendingApprovals.length === 1);
        await expect(
          keel.approveCall(runId, 'call_1_1', { arguments: { url: 'not a url' } }),
        ).resolves.toMatchObject({ decision: 'approved' });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed' });
        const output = JSON.stringify(model.requests[1]?.body.input);
        expect(output).toContain('invalid_arguments');
        expect(output).toContain('url');
        expect(output).not.toContain('opened');
      },
    );
  });
});
