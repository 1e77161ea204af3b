import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliEnvironment, runCli } from '../support/cli.js';
import { ChatCompletionsModel } from '../support/chat-completions-model.js';
import type { ChatAnswer, ChatRequest } from '../support/chat-completions-model.js';
import { temporaryWorkspace } from '../support/harness.js';
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

beforeAll(async () => {
  upstream = await ChatCompletionsModel.start((request) => answer(request));
  litellm = await startLiteLLM(upstream.url);
}, 900_000);

afterAll(async () => {
  await litellm?.close();
  await upstream?.close();
});

/** Lists the workspace, then answers with what the listing showed: right only if the tool output reached it. */
function listThenAnswer(request: ChatRequest): ChatAnswer {
  const toolOutput = request.body.messages.findLast((message) => message.role === 'tool');
  if (toolOutput === undefined) return { calls: [{ name: 'list_directory', arguments: { path: '.' } }] };
  const task = request.body.messages.find((message) => message.role === 'user');
  const marker = /marker-[0-9a-f-]+\.txt/u.exec(JSON.stringify(toolOutput.content))?.[0] ?? 'no marker';
  return { text: `${task === undefined ? 'I have no task.' : 'Task seen.'} The workspace holds ${marker}.` };
}

async function keelRun(
  task: string,
  environment: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; marker: string }> {
  const workspace = await temporaryWorkspace();
  const marker = `marker-${randomUUID()}.txt`;
  await writeFile(path.join(workspace, marker), 'here\n');
  // The test server stands in for the local one (same port), so `keel run` hosts the worker itself.
  const port = inject('temporalAddress').split(':').at(-1)!;
  const result = await runCli(['run', task, '--task-queue', `litellm-${randomUUID()}`], {
    env: cliEnvironment({
      KEEL_LOCAL_PORT: port,
      OPENAI_BASE_URL: litellm.url,
      OPENAI_API_KEY: litellm.key,
      KEEL_MODEL: litellm.model,
      KEEL_WORKSPACE: workspace,
      KEEL_DATA_DIR: path.join(await temporaryWorkspace(), 'data'),
      ...environment,
    }),
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
});
