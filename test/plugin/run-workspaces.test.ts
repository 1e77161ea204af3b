import { mkdir, mkdtemp, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ACTIVITY_NAMES } from '../../src/contract/activity-names.js';
import { runIsOpenIn } from '../../src/plugin/workspace-sweeper.js';
import { RunWorkspaces } from '../../src/tools/run-workspaces.js';
import { deferred } from '../support/deferred.js';
import { connectTestServer, withTestWorker } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyText } from '../support/history.js';
import { executionChain, waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { RecordedRequest } from '../support/scripted-model.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

const read = (file: string) => ({
  name: 'read_file',
  arguments: { path: file, startLine: null, endLine: null },
});
const write = (file: string, content: string) => ({
  name: 'write_file',
  arguments: { path: file, content, createDirectories: null, overwrite: null },
});
const list = (directory: string) => ({ name: 'list_directory', arguments: { path: directory, depth: null } });

/** Waits until `entry` no longer exists: the worker's own sweep removes it in the background. */
async function gone(entry: string): Promise<void> {
  while (
    await stat(entry).then(
      () => true,
      () => false,
    )
  )
    await new Promise((resolve) => setTimeout(resolve, 25));
}

/** The text of the first function call output in a request, or undefined. */
function toolOutput(request: RecordedRequest): string | undefined {
  const item = request.body.input.find((entry) => entry.type === 'function_call_output');
  return item === undefined ? undefined : String(item.output);
}

/**
 * Which run a request belongs to (named in its task as `run-<name>`, or found through the response it
 * continues) and how many requests of that run came before it, for models serving concurrent runs.
 */
function runTracker() {
  const runOf = new Map<string, string>();
  const seen = new Map<string, number>();
  return (request: RecordedRequest): { run: string; step: number } => {
    const previous = request.body.previous_response_id;
    const task = JSON.stringify(request.body.input).match(/run-(\w+)/)?.[1];
    const run = task ?? (previous === undefined ? undefined : runOf.get(previous));
    if (run === undefined) throw new Error(`request ${request.index} belongs to no known run`);
    runOf.set(`resp_${request.index + 1}`, run);
    const step = seen.get(run) ?? 0;
    seen.set(run, step + 1);
    return { run, step };
  };
}

describe('per-run workspaces on one worker', () => {
  it('keeps concurrent runs apart: each writes note.txt and reads back its own', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'keel-runs-'));
    const bothWrote = deferred();
    let writes = 0;
    const track = runTracker();
    const model = await ScriptedModel.start((request) => {
      const { run, step } = track(request);
      if (step === 0) return reply.calls(write('note.txt', `written by ${run}`));
      if (step === 1) {
        // Neither run reads before both have written: in a shared directory the second write would win.
        if (++writes === 2) bothWrote.resolve();
        return reply.held(reply.calls(read('note.txt')), bothWrote.promise);
      }
      return reply.text(toolOutput(request) ?? 'no output');
    });
    try {
      await withTestWorker(server, { model, runWorkspaces: { root } }, async ({ keel }) => {
        const [a, b] = await Promise.all([
          keel.startRun({ task: 'run-alpha: write, then read' }),
          keel.startRun({ task: 'run-beta: write, then read' }),
        ]);
        const [resultA, resultB] = await Promise.all([keel.waitForResult(a), keel.waitForResult(b)]);
        expect(resultA).toMatchObject({ status: 'completed', finalText: 'written by alpha' });
        expect(resultB).toMatchObject({ status: 'completed', finalText: 'written by beta' });
        const workspaces = await RunWorkspaces.open({ root, retentionSeconds: 0 });
        expect(await readFile(path.join(workspaces.directoryOf(a), 'note.txt'), 'utf8')).toBe(
          'written by alpha',
        );
        expect(await readFile(path.join(workspaces.directoryOf(b), 'note.txt'), 'utf8')).toBe(
          'written by beta',
        );
      });
      // A worker starting on the same root sweeps at once: both runs have ended, retention is zero.
      const workspaces = await RunWorkspaces.open({ root, retentionSeconds: 0 });
      const directories = (await readdir(root)).filter((entry) => entry !== '.keel');
      expect(directories).toHaveLength(2);
      await withTestWorker(server, { model, runWorkspaces: { root, retentionSeconds: 0 } }, async () => {
        for (const directory of directories) await gone(path.join(workspaces.root, directory));
      });
    } finally {
      bothWrote.resolve();
      await model.close();
    }
  });

  it('keeps a session’s workspace across its messages, and removes it only once the session has ended', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'keel-runs-'));
    const model = await ScriptedModel.start([
      reply.calls(write('plan.txt', 'ship on friday')),
      reply.text('Noted.'),
      reply.calls(read('plan.txt')),
      reply.text('The plan says: ship on friday'),
    ]);
    try {
      await withTestWorker(server, { model, runWorkspaces: { root } }, async ({ keel, taskQueue }) => {
        const runId = await keel.startRun({ task: 'Write the plan down.', session: true });
        await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 1);
        await keel.sendMessage(runId, 'What does the plan say?');
        await waitForState(keel, runId, (state) => state.phase === 'idle' && state.answers === 2);
        expect(toolOutput(model.requests[3]!)).toBe('ship on friday');
        // Both calls went to the worker that made the workspace, through its own task queue.
        const history = await historyText(server.client, runId);
        expect(history).toContain(ACTIVITY_NAMES.openWorkspace);
        expect(history.match(new RegExp(`"name":\\s*"${taskQueue}/[^"]+"`, 'g'))?.length).toBe(2);

        // Retention zero, yet an open session keeps its workspace.
        const workspaces = await RunWorkspaces.open({ root, retentionSeconds: 0 });
        const isOpen = runIsOpenIn(server.connection, inject('temporalNamespace'));
        expect(await workspaces.sweep(isOpen)).toEqual([]);
        expect((await stat(workspaces.directoryOf(runId))).isDirectory()).toBe(true);

        await keel.endSession(runId);
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', turns: 4 });
        expect(await workspaces.sweep(isOpen)).toEqual([runId]);
        await expect(stat(workspaces.directoryOf(runId))).rejects.toThrow(/ENOENT/);
      });
    } finally {
      await model.close();
    }
  });

  it('keeps the worker holding a run’s workspace across continue-as-new, without opening it again', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'keel-runs-'));
    const model = await ScriptedModel.start([
      reply.calls(write('plan.txt', 'carried over')),
      reply.calls(read('plan.txt')),
      reply.text('done'),
    ]);
    try {
      await withTestWorker(server, { model, runWorkspaces: { root } }, async ({ keel }) => {
        const runId = await keel.startRun({ task: 'Write, then read.', continueAsNewAfterTurns: 1 });
        expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed', finalText: 'done' });
        expect(toolOutput(model.requests[2]!)).toBe('carried over');
        const chain = await executionChain(server.client, runId);
        expect(chain.length).toBeGreaterThan(1);
        const opened = chain.map(
          (execution) =>
            execution.events.filter(
              (event) =>
                event.activityTaskScheduledEventAttributes?.activityType?.name ===
                ACTIVITY_NAMES.openWorkspace,
            ).length,
        );
        // Opened once, in the first execution; the next ones got the holder's queue carried over.
        expect(opened[0]).toBe(1);
        expect(opened.slice(1).every((count) => count === 0)).toBe(true);
      });
    } finally {
      await model.close();
    }
  });

  it('keeps a hostile model inside its own run’s workspace: no .. , absolute path or link reaches another run', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'keel-runs-'));
    const seed = await mkdtemp(path.join(tmpdir(), 'keel-seed-'));
    // Every workspace starts with links out of itself, as a hostile repository could ship them.
    await symlink('..', path.join(seed, 'up'));
    await symlink(root, path.join(seed, 'all'));
    await mkdir(path.join(seed, 'docs'));
    const victimId = `victim-${Date.now()}`;
    const victim = RunWorkspaces.directoryName(victimId);
    const attacks = [
      read(`../${victim}/secret.txt`),
      read(path.join(root, victim, 'secret.txt')),
      read(`up/${victim}/secret.txt`),
      read(`all/${victim}/secret.txt`),
      write(`../${victim}/secret.txt`, 'overwritten'),
      write(`up/${victim}/secret.txt`, 'overwritten'),
      list('..'),
      list('up'),
      list('all'),
    ];
    const track = runTracker();
    const attackOutputs: string[] = [];
    const model = await ScriptedModel.start((request) => {
      const { run, step } = track(request);
      if (run === 'victim')
        return step === 0 ? reply.calls(write('secret.txt', 'victim data')) : reply.text('kept');
      if (step === 0) return reply.calls(...attacks);
      for (const entry of request.body.input) {
        if (entry.type === 'function_call_output') attackOutputs.push(String(entry.output));
      }
      return reply.text('tried');
    });
    try {
      await withTestWorker(
        server,
        { model, runWorkspaces: { root, seed: { kind: 'directory', path: seed } } },
        async ({ keel }) => {
          const victimRun = await keel.startRun({ task: 'run-victim: keep a secret' }, { runId: victimId });
          expect(await keel.waitForResult(victimRun)).toMatchObject({ status: 'completed' });
          const attacker = await keel.startRun({ task: 'run-attacker: take it' });
          expect(await keel.waitForResult(attacker)).toMatchObject({
            status: 'completed',
            finalText: 'tried',
          });
        },
      );
      expect(attackOutputs).toHaveLength(attacks.length);
      for (const output of attackOutputs) {
        expect(output).not.toContain('victim data');
        expect(output).toMatch(/refused|outside|absolute/i);
      }
      expect(await readFile(path.join(root, victim, 'secret.txt'), 'utf8')).toBe('victim data');
    } finally {
      await model.close();
    }
  });
});

describe('per-run workspace settings', () => {
  it('refuses a shared workspace beside per-run ones, and a state directory inside their root', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'keel-runs-'));
    const model = await ScriptedModel.start([]);
    try {
      await expect(
        withTestWorker(
          server,
          { model, runWorkspaces: { root }, stateDirectory: path.join(root, 'state') },
          () => Promise.resolve(),
        ),
      ).rejects.toThrow(/KEEL_STATE_DIR .* and KEEL_WORKSPACES_DIR .* must not lie inside one another/);
      await writeFile(path.join(root, 'a-file'), '');
      await expect(
        withTestWorker(server, { model, runWorkspaces: { root: path.join(root, 'a-file') } }, () =>
          Promise.resolve(),
        ),
      ).rejects.toThrow(/KEEL_WORKSPACES_DIR \(.*a-file\) cannot hold the runs' workspaces/);
    } finally {
      await model.close();
    }
  });
});

describe('a worker whose runUntil body ends at once', () => {
  it.each([
    ['pins runs to its own queue', false],
    ['shares its runs’ workspaces', true],
  ])(
    'stops when it %s',
    async (_, shared) => {
      const root = await mkdtemp(path.join(tmpdir(), 'keel-runs-quick-'));
      const model = await ScriptedModel.start([]);
      try {
        // While the worker waited for its own queue (or even one tick) before polling, such a body ended
        // first: runUntil found the worker not yet running, never shut it down, and never returned.
        const runWorkspaces = { root, ...(shared ? { shared: true } : {}) };
        expect(await withTestWorker(server, { model, runWorkspaces }, () => Promise.resolve('done'))).toBe(
          'done',
        );
      } finally {
        await model.close();
      }
    },
    30_000,
  );
});
