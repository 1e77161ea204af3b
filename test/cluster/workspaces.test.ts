/**
 * Per-run workspaces on three machines (worker processes, each with a disk of its own) on the real
 * Temporal server on PostgreSQL: concurrent sessions each keep their own file on the machine that
 * made their workspace, and when that machine is SIGKILLed its sessions are told their workspace
 * was lost while the others read their files back.
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunWorkspaces } from '../../src/tools/run-workspaces.js';
import type { WorkerProcess } from '../support/process/control.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest, ScriptStep } from '../support/scripted-model.js';
import { Cluster } from './support/cluster.js';

const SESSIONS = 6;

let cluster: Cluster;
beforeAll(async () => {
  cluster = await Cluster.start();
});
afterAll(async () => {
  await cluster?.close();
});

/**
 * A session's first message is its name: the model writes it to note.txt. "read <name>" makes it
 * read note.txt and answer with what it found; a lost workspace it answers with "lost".
 */
function policy(request: RecordedRequest): ScriptStep {
  const item = request.body.input.at(-1);
  if (item?.type === 'function_call_output') {
    const output = String(item.output);
    if (output.includes('workspace_lost')) return reply.text('lost');
    if (/^session-\d+$/u.test(output)) return reply.text(`read ${output}`);
    return reply.text('Written.');
  }
  const text = String(item?.content);
  if (text.startsWith('read '))
    return reply.calls({
      name: 'read_file',
      arguments: { path: 'note.txt', startLine: null, endLine: null },
    });
  return reply.calls({
    name: 'write_file',
    arguments: { path: 'note.txt', content: text, createDirectories: null, overwrite: null },
  });
}

describe('per-run workspaces on three machines of a cluster', () => {
  it('keeps each session’s file on its own machine; a killed machine’s sessions are told theirs is lost', async () => {
    const model = await ScriptedModel.start(policy);
    try {
      const machines: Array<{ worker: WorkerProcess; root: string }> = [];
      for (let index = 0; index < 3; index += 1) {
        const root = await mkdtemp(path.join(tmpdir(), `keel-machine-${index}-runs-`));
        const worker = await cluster.startWorker(model.url, {
          environment: {
            KEEL_WORKSPACE_MODE: 'per-run',
            KEEL_WORKSPACES_DIR: root,
            KEEL_WORKSPACE_FAILOVER_SECONDS: '3',
          },
        });
        machines.push({ worker, root });
      }
      const { keel } = cluster;
      const names = Array.from({ length: SESSIONS }, (_, index) => `session-${index}`);
      const runIds = await Promise.all(names.map((task) => keel.startRun({ task, session: true })));
      await Promise.all(
        runIds.map((runId) =>
          waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 1),
        ),
      );
      const holderOf = (runId: string) =>
        machines.findIndex(({ root }) => existsSync(path.join(root, RunWorkspaces.directoryName(runId))));
      const holders = runIds.map(holderOf);
      expect(holders.every((holder) => holder >= 0)).toBe(true);

      // The machine holding the first session's workspace goes down; the sessions ask for their notes.
      const victim = holders[0]!;
      await machines[victim]!.worker.kill();
      await Promise.all(runIds.map((runId, index) => keel.sendMessage(runId, `read ${names[index]}`)));
      await Promise.all(
        runIds.map((runId) =>
          waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 2),
        ),
      );
      await Promise.all(runIds.map((runId) => keel.endSession(runId)));
      const answers = await Promise.all(
        runIds.map(async (runId) => {
          const result = await keel.waitForResult(runId);
          return result.status === 'completed' ? result.finalText : result.status;
        }),
      );
      console.info(
        `[measure] cluster workspaces: holders ${JSON.stringify(holders)}, machine ${victim} killed`,
      );
      expect(answers).toEqual(
        names.map((name, index) => (holders[index] === victim ? 'lost' : `read ${name}`)),
      );
    } finally {
      await cluster.killWorkers();
      await model.close();
    }
  });
});
