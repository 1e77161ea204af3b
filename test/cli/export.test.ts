import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunHistoryFile, RunHistoryFile } from '../../src/eval/history-file.js';
import { readTranscript } from '../../src/eval/read-transcript.js';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

let server: TestServer;
let environment: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = await connectTestServer();
  environment = testServerCliEnvironment();
});
afterAll(async () => {
  await server?.close();
});

describe('keel export', () => {
  it('writes the run history to a file that reads back as the same transcript, or to stdout', async () => {
    const model = await ScriptedModel.start([
      reply.calls({ name: 'echo', arguments: { text: 'hi' } }),
      reply.calls({ name: 'echo', arguments: { text: 'again' } }),
      reply.text('done'),
    ]);
    try {
      const runId = await withTestWorker(server, { model, tools: [echoTool] }, async ({ keel }) => {
        const id = await keel.startRun({ task: 'Say hi twice', continueAsNewAfterTurns: 2 });
        await keel.waitForResult(id);
        return id;
      });
      model.assertDone();
      // The worker is gone: exporting needs none.
      const file = path.join(await mkdtemp(path.join(tmpdir(), 'keel-export-cli-')), 'case.json');
      const written = await runCli(['export', runId, '--output', file], { env: environment });
      expect(written.code).toBe(0);
      expect(written.stdout).toBe(
        `Exported run ${runId} (2 executions, ${await eventCount(file)} events) to ${file}\n`,
      );
      const transcript = await readTranscript(server.client, runId);
      expect(transcript.turns).toHaveLength(3);
      expect(await readRunHistoryFile(file)).toEqual(transcript);

      const json = await runCli(['export', runId, '-o', file, '--json'], { env: environment });
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({
        runId,
        output: file,
        executions: 2,
        events: await eventCount(file),
      });

      const printed = await runCli(['export', runId], { env: environment });
      expect(printed.code).toBe(0);
      const parsed = RunHistoryFile.parse(JSON.parse(printed.stdout));
      expect(parsed.runId).toBe(runId);
      expect(parsed.executions.map((execution) => execution.history.events.length)).toEqual(
        RunHistoryFile.parse(JSON.parse(await readFile(file, 'utf8'))).executions.map(
          (execution) => execution.history.events.length,
        ),
      );
    } finally {
      await model.close();
    }
  });

  it('says there is no such run (exit 1, run-not-found) and wants exactly one run id (exit 2)', async () => {
    const missing = await runCli(['export', 'no-such-run-4b1e', '--json'], { env: environment });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({
      error: { code: 'run-not-found', runId: 'no-such-run-4b1e' },
    });
    const usage = await runCli(['export', '--json'], { env: environment });
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toMatchObject({ error: { code: 'usage' } });
    const help = await runCli(['--help'], { env: environment });
    expect(help.stdout).toContain('export <id>');
  });
  it('writes a large history to a pipe whole: the command exits only once stdout has it all', async () => {
    const model = await ScriptedModel.start([reply.text('done')]);
    try {
      // A task near its 200,000-character limit: the history is bigger than a pipe's buffer.
      const task = `Remember ${'all of this, '.repeat(15_000)}`.trim();
      const runId = await withTestWorker(server, { model }, async ({ keel }) => {
        const id = await keel.startRun({ task });
        await keel.waitForResult(id);
        return id;
      });
      const printed = await runCli(['export', runId], { env: environment });
      expect(printed.code).toBe(0);
      expect(printed.stdout.length).toBeGreaterThan(task.length);
      const file = RunHistoryFile.parse(JSON.parse(printed.stdout));
      expect(file.runId).toBe(runId);
    } finally {
      await model.close();
    }
  });
});

async function eventCount(file: string): Promise<number> {
  const parsed = RunHistoryFile.parse(JSON.parse(await readFile(file, 'utf8')));
  return parsed.executions.reduce((sum, execution) => sum + execution.history.events.length, 0);
}
