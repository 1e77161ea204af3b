import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EDIT_FILE_MAX_BYTES } from '../../../src/tools/builtin/edit-file.js';
import { SEARCH_FILES_REGEX_BUDGET_MS } from '../../../src/tools/builtin/search-files.js';
import { connectTestServer, temporaryWorkspace, withTestWorker } from '../../support/harness.js';
import type { TestServer } from '../../support/harness.js';
import { reply, ScriptedModel } from '../../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/**
 * The hostile calls of the measuring test, through a real worker and the real Temporal server, with
 * a heartbeat timeout of 2 s. A tool that blocked the event loop longer (the gigabyte replaceAll
 * used to, for seconds) misses its heartbeats: Temporal retries the call, and the model is told
 * the edit's side effect is "in doubt" instead of why it was refused.
 */
describe('a hostile model through a real run', () => {
  it('gets the size refusal and the regex budget note, with no heartbeat timeout', async () => {
    const workspace = await temporaryWorkspace();
    await writeFile(path.join(workspace, 'small.txt'), 'x'.repeat(4096));
    await writeFile(path.join(workspace, 'evil.txt'), `${'a'.repeat(40)}!\n`);
    const model = await ScriptedModel.start([
      reply.calls(
        {
          name: 'edit_file',
          arguments: { path: 'small.txt', oldText: 'x', newText: 'y'.repeat(1_000_000), replaceAll: true },
        },
        {
          name: 'search_files',
          arguments: {
            pattern: '^(a+)+$',
            regex: true,
            path: '.',
            glob: null,
            caseSensitive: true,
            maxResults: 100,
          },
        },
      ),
      reply.text('done'),
    ]);
    try {
      // No output cap, so no stream budget cuts the million-character argument before the tool sees it.
      await withTestWorker(server, { model, workspace, maxOutputTokens: null }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'attack the worker', heartbeatTimeoutSeconds: 2 });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'done' });
      });
      model.assertDone();
      const outputs = (model.requests[1]?.body.input as Array<{ type: string; output: string }>).map(
        (item) => item.output,
      );
      expect(outputs).toEqual([
        JSON.stringify({
          error: 'tool_error',
          message: `the edit would make small.txt ${4096 * 1_000_000} bytes; edit_file writes files up to ${EDIT_FILE_MAX_BYTES} bytes`,
        }),
        'No matches for "^(a+)+$" in . (1 file searched)\n' +
          `… stopped early: the regex ran for more than ${SEARCH_FILES_REGEX_BUDGET_MS} ms on evil.txt and was stopped; ` +
          'it probably backtracks catastrophically (nested quantifiers like (a+)+ or (.*)*): simplify it',
      ]);
    } finally {
      await model.close();
    }
  });
});
