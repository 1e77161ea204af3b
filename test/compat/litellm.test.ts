import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KeelClient } from '../../src/client.js';
import { cliEnvironment, runCli, startCli } from '../support/cli.js';
import type { CliProcess } from '../support/cli.js';
import { ChatCompletionsModel } from '../support/chat-completions-model.js';
import type { ChatAnswer, ChatRequest } from '../support/chat-completions-model.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { executionChain } from '../support/run-state.js';
import { startLiteLLM } from '../support/litellm.js';
import type { LiteLLM } from '../support/litellm.js';

/**
 * Keel through a real third-party Responses server: LiteLLM's proxy (PyPI, pinned in
 * scripts/litellm/litellm.sh) without a database, turning each Responses request into a chat
 * completion for a scripted upstream. `keel run` as a user runs it, with no Keel setting but where
 * the model is (docs/models.md).
 */
let upstream: ChatCompletionsModel;
let litellm: LiteLLM;
/** The policy of the test that runs now; each run has its own task, so requests are told apart. */
let answer: (request: ChatRequest) => ChatAnswer = () => ({ status: 500, message: 'no test is running' });

let server: TestServer;

beforeAll(async () => {
  server = await connectTestServer();
  upstream = await ChatCompletionsModel.start((request) => answer(request));
  litellm = await startLiteLLM(upstream.url);
}, 900_000);

afterAll(async () => {
  await litellm?.close();
  await upstream?.close();
  await server?.close();
});

/** Waits until `ready` holds, polling: the test's timeout bounds it. */
async function until(ready: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** A `keel worker` (built, in its own process) serving `taskQueue` through LiteLLM with Keel's defaults. */
async function startWorker(taskQueue: string, workspace: string): Promise<CliProcess> {
  const worker = startCli(['worker'], {
    env: cliEnvironment({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      OPENAI_BASE_URL: litellm.url,
      OPENAI_API_KEY: litellm.key,
      KEEL_MODEL: litellm.model,
      KEEL_TASK_QUEUE: taskQueue,
      KEEL_WORKSPACE: workspace,
      KEEL_STATE_DIR: await mkdtemp(path.join(tmpdir(), 'keel-state-')),
    }),
    cwd: workspace,
  });
  await worker.waitForOutput(`Keel worker on task queue "${taskQueue}"`);
  return worker;
}

async function stop(worker: CliProcess): Promise<void> {
  if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
  await worker.exited;
}

/** Lists the workspace, then answers with what the listing showed: right only if the tool output reached it. */
function listThenAnswer(request: ChatRequest): ChatAnswer {
  const toolOutput = request.body.messages.findLast((message) => message.role === 'tool');
  if (toolOutput === undefined) return { calls: [{ name: 'list_directory', arguments: { path: '.' } }] };
  const task = request.body.messages.find((message) => message.role === 'user');
  const marker = /marker-[0-9a-f-]+\.txt/u.exec(JSON.stringify(toolOutput.content))?.[0] ?? 'no marker';
  return { text: `${task === undefined ? 'I have no task.' : 'Task seen.'} The workspace holds ${marker}.` };
}

/** The environment of a `keel run` through LiteLLM in `workspace`, hosting its worker on the test server. */
async function keelRunEnvironment(
  workspace: string,
  environment: Record<string, string> = {},
): Promise<NodeJS.ProcessEnv> {
  return cliEnvironment({
    // The test server stands in for the local one (same port), so `keel run` hosts the worker itself.
    KEEL_LOCAL_PORT: inject('temporalAddress').split(':').at(-1)!,
    OPENAI_BASE_URL: litellm.url,
    OPENAI_API_KEY: litellm.key,
    KEEL_MODEL: litellm.model,
    KEEL_WORKSPACE: workspace,
    KEEL_DATA_DIR: path.join(await temporaryWorkspace(), 'data'),
    ...environment,
  });
}

async function keelRun(
  task: string,
  environment: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; marker: string }> {
  const workspace = await temporaryWorkspace();
  const marker = `marker-${randomUUID()}.txt`;
  await writeFile(path.join(workspace, marker), 'here\n');
  const result = await runCli(['run', task, '--task-queue', `litellm-${randomUUID()}`], {
    env: await keelRunEnvironment(workspace, environment),
    cwd: workspace,
  });
  return { ...result, marker };
}

const requestsFor = (task: string): ChatRequest[] =>
  upstream.requests.filter((request) => JSON.stringify(request.body.messages).includes(task));

describe('through LiteLLM (a Responses-to-chat-completions gateway without a database)', () => {
  it('a tool run with Keel’s defaults completes with the right answer, its task in every request', async () => {
    answer = listThenAnswer;
    const task = `List the workspace (${randomUUID()})`;
    const before = upstream.requests.length;
    const run = await keelRun(task);
    const mine = upstream.requests.slice(before);
    const show = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nLiteLLM:\n${litellm.output().slice(-3000)}`;
    expect(run.code, show).toBe(0);
    expect(run.stdout).toContain('✔ completed (2 turns · 1 tool call');
    expect(run.stdout).toContain(`Task seen. The workspace holds ${run.marker}.`);
    // Stateless, as the default is for a server that is not OpenAI's: the task reached both turns.
    expect(mine).toHaveLength(2);
    expect(requestsFor(task)).toHaveLength(2);
    // Keel streams every turn; LiteLLM asked the upstream for a stream.
    console.log(
      `[measure] LiteLLM upstream requests streamed: ${JSON.stringify(mine.map((r) => r.body.stream === true))}`,
    );
  });

  it('reads whole answers too, with streaming off', async () => {
    answer = listThenAnswer;
    const task = `List the workspace, no stream (${randomUUID()})`;
    const run = await keelRun(task, { KEEL_STREAM: 'false' });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`Task seen. The workspace holds ${run.marker}.`);
    expect(requestsFor(task).map((request) => request.body.stream === true)).toEqual([false, false]);
  });

  it('runs parallel tool calls in one turn', async () => {
    answer = (request) => {
      const outputs = request.body.messages.filter((message) => message.role === 'tool');
      if (outputs.length === 0)
        return {
          calls: [
            { name: 'list_directory', arguments: { path: '.' } },
            { name: 'search_files', arguments: { pattern: 'here', path: '.' } },
          ],
        };
      return { text: `Both came back: ${outputs.length} outputs.` };
    };
    const run = await keelRun(`Two tools at once (${randomUUID()})`);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain('Both came back: 2 outputs.');
    expect(run.stdout).toContain('2 tool calls');
  });

  it('comes through an upstream 500 on a retry', async () => {
    let failed = 0;
    answer = (request) => {
      if (request.body.messages.some((message) => message.role === 'tool') && failed === 0) {
        failed += 1;
        return { status: 500, message: 'upstream fell over' };
      }
      return listThenAnswer(request);
    };
    const run = await keelRun(`Survive a 500 (${randomUUID()})`);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(failed).toBe(1);
    expect(run.stdout).toContain(`Task seen. The workspace holds ${run.marker}.`);
  });

  it('waits out an upstream 429 with Retry-After and completes', async () => {
    let limited = 0;
    answer = (request) => {
      if (request.body.messages.some((message) => message.role === 'tool') && limited === 0) {
        limited += 1;
        return { status: 429, message: 'slow down', headers: { 'retry-after': '1' } };
      }
      return listThenAnswer(request);
    };
    const run = await keelRun(`Survive a 429 (${randomUUID()})`);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(limited).toBe(1);
    expect(run.stdout).toContain(`Task seen. The workspace holds ${run.marker}.`);
  });

  it('a run made to chain there fails at the first turn LiteLLM did not continue, saying how to fix it', async () => {
    answer = listThenAnswer;
    const task = `List the workspace, chained (${randomUUID()})`;
    const before = upstream.requests.length;
    const run = await keelRun(task, { KEEL_CONVERSATION: 'chained' });
    const mine = upstream.requests.slice(before);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(3);
    expect(run.stdout).toContain('The model server did not continue the conversation');
    expect(run.stdout).toContain('KEEL_CONVERSATION=stateless');
    expect(run.stdout).toContain('ModelError.ConversationNotContinued');
    // What LiteLLM sent for the second turn: the tool output without the task, which Keel caught.
    expect(mine).toHaveLength(2);
    expect(JSON.stringify(mine[1]!.body.messages)).not.toContain(task);
  });

  it('a run cancelled while the answer streams ends cancelled, and LiteLLM stops reading the upstream', async () => {
    const task = `Tell a long story (${randomUUID()})`;
    answer = () => ({ text: 'Once upon a time, '.repeat(200), pieceMs: 50 });
    const before = upstream.requests.length;
    const workspace = await temporaryWorkspace();
    const cli = startCli(['run', task, '--task-queue', `litellm-${randomUUID()}`], {
      env: await keelRunEnvironment(workspace),
      cwd: workspace,
    });
    try {
      await cli.waitForOutput('started.');
      const runId = /Run (keel-[0-9a-f-]+) started\./u.exec(cli.stderr)![1]!;
      // Streaming: the upstream has written some of its 450 pieces, 50 ms apart.
      await until(() => (upstream.requests[before]?.piecesSent ?? 0) > 2);
      await server.client.workflow.getHandle(runId).cancel();
      expect(await cli.exited, `${cli.stdout}\n${cli.stderr}`).toBe(3);
      expect(cli.stdout).toContain('■ cancelled');
      // Keel closed its stream; LiteLLM then closed the upstream's, long before its 22 s answer ended.
      await until(() => upstream.requests[before]!.ended !== undefined);
      expect(upstream.requests[before]!.ended).toBe('closedEarly');
      expect(upstream.requests.slice(before)).toHaveLength(1);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
  });

  it('a run whose worker is SIGKILLed mid-turn is finished by another worker, its task still sent', async () => {
    const task = `List the workspace, survive a crash (${randomUUID()})`;
    // The first request streams slowly, so the worker dies in the middle of it; the rest answer at once.
    let slow = true;
    answer = (request) => {
      if (slow) {
        slow = false;
        return { text: 'I was about to say something long. '.repeat(100), pieceMs: 50 };
      }
      return listThenAnswer(request);
    };
    const before = upstream.requests.length;
    const taskQueue = `litellm-crash-${randomUUID()}`;
    const workspace = await temporaryWorkspace();
    const marker = `marker-${randomUUID()}.txt`;
    await writeFile(path.join(workspace, marker), 'here\n');
    const first = await startWorker(taskQueue, workspace);
    let second: CliProcess | undefined;
    try {
      const keel = new KeelClient(server.client, taskQueue);
      const runId = await keel.startRun({ task, heartbeatTimeoutSeconds: 2 });
      await until(() => (upstream.requests[before]?.piecesSent ?? 0) > 2);
      first.child.kill('SIGKILL');
      await first.exited;
      second = await startWorker(taskQueue, workspace);
      const result = await keel.waitForResult(runId);
      expect(result, `${second.stdout}\n${second.stderr}`).toMatchObject({
        status: 'completed',
        finalText: `Task seen. The workspace holds ${marker}.`,
      });
      // The turn the crash cut was sent again whole (the task in it), then the tool turn.
      const mine = upstream.requests.slice(before);
      expect(mine.length).toBeGreaterThanOrEqual(3);
      expect(mine.every((request) => JSON.stringify(request.body.messages).includes(task))).toBe(true);
    } finally {
      await stop(first);
      if (second !== undefined) await stop(second);
    }
  });

  it('a long stateless run past compaction keeps its task: the oldest turns go, with a note, and it completes', async () => {
    const task = `Read the big files one by one (${randomUUID()})`;
    const workspace = await temporaryWorkspace();
    // Four files of 200 KB, read one a turn: at the continue-as-new before turn 5 (every two turns
    // here) the conversation holds three, over the 512 KB a run carries, so the oldest turn is dropped.
    const files = Array.from({ length: 4 }, (_, index) => `big-${index}.txt`);
    for (const [index, file] of files.entries())
      await writeFile(path.join(workspace, file), `${`file ${index} `.repeat(28_500)}\n`);
    answer = (request) => {
      const reads = request.body.messages.filter((message) => message.role === 'tool').length;
      const next = files[reads];
      if (next !== undefined) return { calls: [{ name: 'read_file', arguments: { path: next } }] };
      return {
        text: `Read them all; my task was ${request.body.messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes(task)) ? 'still there' : 'lost'}.`,
      };
    };
    const before = upstream.requests.length;
    const taskQueue = `litellm-long-${randomUUID()}`;
    const worker = await startWorker(taskQueue, workspace);
    try {
      const keel = new KeelClient(server.client, taskQueue);
      const runId = await keel.startRun({
        task,
        observationCharLimit: 250_000,
        continueAsNewAfterTurns: 2,
      });
      const result = await keel.waitForResult(runId);
      expect(result, `${worker.stdout}\n${worker.stderr}`).toMatchObject({ status: 'completed' });
      // The model never read the fifth file's answer without its task.
      expect(result).toMatchObject({ finalText: 'Read them all; my task was still there.' });
      const mine = upstream.requests.slice(before);
      // (Booleans: a failure must not print 600 KB of conversation.)
      const last = JSON.stringify(mine.at(-1)!.body.messages);
      const holds = (text: string) => last.includes(text);
      expect(holds(task), 'the last request holds the task').toBe(true);
      expect(
        holds('earlier turn(s) of this conversation were dropped'),
        'the last request says turns were dropped',
      ).toBe(true);
      // The oldest file's content went; the newest is there.
      expect(holds('file 0 '), 'the last request holds the oldest file').toBe(false);
      expect(holds('file 3 '), 'the last request holds the newest file').toBe(true);
      expect((await executionChain(server.client, runId)).length).toBeGreaterThan(1);
    } finally {
      await stop(worker);
    }
  });
});
