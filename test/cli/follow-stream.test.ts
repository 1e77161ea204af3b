import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamItem } from '../../src/contract/stream-event.js';
import { runCli, testServerCliEnvironment } from '../support/cli.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const ANSWER = 'One streamed answer, \u001b[2Jword by word.';

/** The JSON lines `keel follow --stream` printed, each checked against the contract's schema. */
function streamLines(stdout: string): StreamItem[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => StreamItem.parse(JSON.parse(line)));
}

describe('keel follow --stream', () => {
  it('prints the run stream as JSON lines to its end, a turn whose attempt died once, and goes on from --from', async () => {
    const model = await ScriptedModel.start([
      reply.streamed(reply.text(ANSWER), { cutAfter: 2 }),
      reply.text(ANSWER),
    ]);
    try {
      await withTestWorker(server, { model, modelMode: 'foreground' }, async ({ keel, taskQueue }) => {
        const runId = await keel.startRun({ task: 'answer' });
        await keel.waitForResult(runId);
        const env = testServerCliEnvironment();
        const all = await runCli(['follow', runId, '--stream', '--task-queue', taskQueue], { env });
        expect(all.code).toBe(0);
        // Each line is one JSON value: the model's escape sequence is escaped, never raw on stdout.
        expect(all.stdout).not.toContain('\u001b');
        const items = streamLines(all.stdout);
        // Read after the run, the stream is the run's log: the dead attempt is not in it, the turn is once.
        expect(items).toEqual([
          { offset: 0, event: { type: 'turn_start', turn: 1 } },
          { offset: 1, event: { type: 'text', turn: 1, delta: ANSWER } },
          { offset: 2, event: { type: 'turn_end', turn: 1 } },
          { offset: 3, event: { type: 'end', status: 'completed' } },
        ]);

        const rest = await runCli(['follow', runId, '--stream', '--from', '2', '--task-queue', taskQueue], {
          env,
        });
        expect(rest.code).toBe(0);
        expect(streamLines(rest.stdout)).toEqual(items.slice(2));
      });
    } finally {
      await model.close();
    }
  });

  it('refuses a --from that is no offset, and --from without --stream, as bad usage', async () => {
    const env = testServerCliEnvironment();
    const bad = await runCli(['follow', 'some-run', '--stream', '--from', '-3'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--from takes an offset (0, 1, …), got "-3"');
    const alone = await runCli(['follow', 'some-run', '--from', '3'], { env });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--from goes with --stream');
  });
});
