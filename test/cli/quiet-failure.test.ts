import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { cliEnvironment, runCli } from '../support/cli.js';
import { temporaryWorkspace } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

// `keel run` hosting its own worker: the worker's and the SDK's logs of a failing model call are for a
// log file (or KEEL_DEBUG), not for the terminal, where the one-line failure is the news.
describe('a model that answers 404', () => {
  it('keel run prints the failure, not the worker logs around it', async () => {
    const model = await ScriptedModel.start([
      reply.error(404, 'The model `no-such-model` does not exist or you do not have access to it.', {
        code: 'model_not_found',
      }),
    ]);
    try {
      // The test server stands in for the local one (same port), so this process hosts the worker.
      const port = inject('temporalAddress').split(':').at(-1)!;
      const workspace = await temporaryWorkspace();
      // One Keel creates: it holds every task and tool output, so it is created for its owner only.
      const dataDirectory = path.join(await temporaryWorkspace(), 'data');
      const { code, stdout, stderr } = await runCli(
        ['run', 'Hello', '--model', 'no-such-model', '--task-queue', `quiet-${randomUUID()}`],
        {
          env: cliEnvironment({
            KEEL_LOCAL_PORT: port,
            OPENAI_BASE_URL: model.url,
            OPENAI_API_KEY: 'sk-test-quiet',
            KEEL_WORKSPACE: workspace,
            KEEL_DATA_DIR: dataDirectory,
          }),
          cwd: workspace,
        },
      );
      console.log(`stderr of a model 404 (${stderr.trimEnd().split('\n').length} lines):\n${stderr}`);
      expect(code).toBe(3);
      expect(stdout).toMatch(/✘ failed: .*no-such-model/u);
      const lines = stderr.trimEnd().split('\n');
      expect(lines.filter((line) => /WARN|ERROR|at .*\(|Error:/u.test(line))).toEqual([]);
      // Only Keel's own notes (where the server is, the bundling, the run, where the log is): ~78
      // lines of SDK warnings and stacks came between them before.
      const notes = [
        /^Using the Temporal server already running on /u,
        /^Bundling the workflow code /u,
        /^Run keel-[\w-]+ started\.$/u,
        /^Watch it: http/u,
        /^The hosted worker's warnings are in /u,
      ];
      expect(lines.filter((line) => !notes.some((note) => note.test(line)))).toEqual([]);
      expect(lines.length).toBeLessThanOrEqual(notes.length);
      expect(model.requests).toHaveLength(1);
      // The detail is kept, where the last line of stderr says.
      const log = path.join(dataDirectory, 'worker.log');
      expect(lines.at(-1)).toContain(log);
      expect(await readFile(log, 'utf8')).toContain('ModelError.NotFound');
      expect((await stat(dataDirectory)).mode & 0o777).toBe(0o700);
      expect((await stat(log)).mode & 0o777).toBe(0o600);
    } finally {
      await model.close();
    }
  });
});
