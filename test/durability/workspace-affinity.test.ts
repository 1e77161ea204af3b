import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACTIVITY_NAMES } from '../../src/contract/activity-names.js';
import { RunWorkspaces } from '../../src/tools/run-workspaces.js';
import { historyText } from '../support/history.js';
import { useProcessFixtures } from '../support/process/fixture.js';
import { waitForState } from '../support/run-state.js';
import { reply } from '../support/scripted-model.js';
import type { RecordedRequest } from '../support/scripted-model.js';

const processes = useProcessFixtures();

const read = (file: string) =>
  reply.calls({ name: 'read_file', arguments: { path: file, startLine: null, endLine: null } });
const write = (file: string, content: string) =>
  reply.calls({
    name: 'write_file',
    arguments: { path: file, content, createDirectories: null, overwrite: null },
  });

/** The output the model got for its call in this request. */
function toolOutput(request: RecordedRequest | undefined): string | undefined {
  const item = request?.body.input.find((entry) => entry.type === 'function_call_output');
  return item === undefined ? undefined : String(item.output);
}

/** A worker process's settings for per-run workspaces under `root`. */
function perRun(root: string, more: Record<string, string> = {}): Record<string, string> {
  return { KEEL_WORKSPACE_MODE: 'per-run', KEEL_WORKSPACES_DIR: root, ...more };
}

/** The content of `file` in every run workspace under `root`. */
async function filesIn(root: string, file: string): Promise<string[]> {
  const runs = (await readdir(root)).filter((entry) => !entry.startsWith('.'));
  return Promise.all(runs.map((run) => readFile(path.join(root, run, file), 'utf8')));
}

describe('the worker holding a run’s workspace', () => {
  it('gets all the run’s calls while it lives; once SIGKILLed, the model is told the workspace is lost and the run goes on in a new one', async () => {
    const { model, fixture } = await processes.setUp([
      write('note.txt', 'first draft'),
      reply.text('Written.'),
      read('note.txt'),
      reply.text('Read.'),
      read('note.txt'),
      write('note.txt', 'second draft'),
      read('note.txt'),
      reply.text('Rewritten.'),
    ]);
    // Two machines: each worker has a disk of its own.
    const [rootA, rootB] = await Promise.all([
      mkdtemp(path.join(tmpdir(), 'keel-runs-a-')),
      mkdtemp(path.join(tmpdir(), 'keel-runs-b-')),
    ]);
    const failover = { KEEL_WORKSPACE_FAILOVER_SECONDS: '2' };
    const holder = await fixture.startWorker({ environment: perRun(rootA, failover) });
    const { keel } = fixture;
    const runId = await keel.startRun({ task: 'Keep notes.', session: true });
    await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 1);

    // A second worker on the queue: the run's calls still go to the one holding its workspace.
    await fixture.startWorker({ environment: perRun(rootB, failover) });
    await keel.sendMessage(runId, 'Read the note.');
    await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 2);
    expect(toolOutput(model.requests[3])).toBe('first draft');

    await holder.kill();
    await keel.sendMessage(runId, 'Read it again, then write the second draft.');
    await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 3);
    const lost = JSON.parse(toolOutput(model.requests[5]) ?? '{}') as { error?: string; message?: string };
    expect(lost.error).toBe('workspace_lost');
    expect(lost.message).toMatch(/workspace with it: files written or changed there are lost/);
    expect(toolOutput(model.requests[7])).toBe('second draft');

    await keel.endSession(runId);
    expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'Rewritten.' });
    expect(await filesIn(rootA, 'note.txt')).toEqual(['first draft']);
    expect(await filesIn(rootB, 'note.txt')).toEqual(['second draft']);
    // The workspace was opened twice: by the first holder, then by the worker that took over.
    const history = await historyText(keel.temporal, runId);
    expect(history.split(`"name": "${ACTIVITY_NAMES.openWorkspace}"`).length - 1).toBe(2);
  });

  it('loses nothing with shared storage: the run is pinned to no worker and another one carries on', async () => {
    const { model, fixture } = await processes.setUp([
      write('note.txt', 'kept'),
      reply.text('Written.'),
      read('note.txt'),
      reply.text('Still there.'),
    ]);
    const root = await mkdtemp(path.join(tmpdir(), 'keel-runs-shared-'));
    const shared = perRun(root, { KEEL_WORKSPACES_SHARED: 'true' });
    const first = await fixture.startWorker({ environment: shared });
    const { keel } = fixture;
    const runId = await keel.startRun({ task: 'Keep a note.', session: true });
    await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 1);
    await fixture.startWorker({ environment: shared });
    await first.kill();
    await keel.sendMessage(runId, 'Read the note.');
    await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 2);
    expect(toolOutput(model.requests[3])).toBe('kept');
    await keel.endSession(runId);
    expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'Still there.' });
    expect(await readFile(path.join(root, RunWorkspaces.directoryName(runId), 'note.txt'), 'utf8')).toBe(
      'kept',
    );
    expect(await historyText(keel.temporal, runId)).not.toContain(ACTIVITY_NAMES.openWorkspace);
  });
});
