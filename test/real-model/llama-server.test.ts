import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliEnvironment, runCli, startCli } from '../support/cli.js';
import type { CliProcess } from '../support/cli.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyEvents } from '../support/history.js';
import { startLlamaServer } from '../support/llama-server.js';
import type { LlamaServer } from '../support/llama-server.js';

/**
 * The real-model tier: Keel against llama.cpp's own server (scripts/llama/llama-server.sh builds it
 * once) serving SmolLM2-135M-Instruct on this machine's CPU, through the built `keel run` with no
 * Keel setting but where the model is. It asserts Keel's behaviour, not the model's wisdom: a run
 * ends with a status and a reason a person understands, usage is counted, history stays small, an
 * answer of nothing is never success, and cancelling a run stops the generation on the server.
 */

/** More events than a one-turn run writes however it ends, and far fewer than a streamed runaway once did (7,110). */
const HISTORY_BOUND = 40;

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The environment of a `keel run` pointed at `llama` and hosting its own worker on the test server. */
async function keelEnvironment(llama: LlamaServer, extra: Record<string, string> = {}) {
  return cliEnvironment({
    // The test server stands in for the local one (same port), so `keel run` hosts the worker itself.
    KEEL_LOCAL_PORT: inject('temporalAddress').split(':').at(-1)!,
    OPENAI_BASE_URL: llama.url,
    OPENAI_API_KEY: 'sk-llama-needs-none',
    KEEL_MODEL: llama.model,
    KEEL_WORKSPACE: await temporaryWorkspace(),
    KEEL_DATA_DIR: path.join(await temporaryWorkspace(), 'data'),
    ...extra,
  });
}

const runArguments = (task: string, ...more: string[]) => [
  'run',
  task,
  '--task-queue',
  `real-model-${randomUUID()}`,
  ...more,
];

/** The run's id, from what `keel run` says on stderr when it starts it. */
function runIdOf(output: { stdout: string; stderr: string }): string {
  const id = /Run (keel-[0-9a-f-]+) started\./u.exec(output.stderr)?.[1];
  if (id === undefined) throw new Error(`keel run named no run:\n${output.stdout}\n${output.stderr}`);
  return id;
}

async function historySize(runId: string): Promise<number> {
  return (await historyEvents(server.client, runId)).length;
}

/** Waits until `ready` holds, polling: the test's timeout bounds it. */
async function until(ready: () => Promise<boolean>): Promise<void> {
  while (!(await ready())) await new Promise((resolve) => setTimeout(resolve, 100));
}

describe('llama.cpp’s server, with its defaults', () => {
  let llama: LlamaServer;
  beforeAll(async () => {
    llama = await startLlamaServer();
  });
  afterAll(async () => {
    await llama?.close();
  });

  it('keel run --conversation stateless drives it to an answer, its usage counted, its history small', async () => {
    const promptTokens = await llama.metric('prompt_tokens_total');
    const run = await runCli(
      runArguments(
        'What is the capital of France? Answer in one short sentence.',
        '--conversation',
        'stateless',
      ),
      { env: await keelEnvironment(llama) },
    );
    const show = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nllama-server:\n${llama.output().slice(-3000)}`;
    expect(run.code, show).toBe(0);
    const ended = /✔ completed \((\d+) turns? · \d+ tool calls? · (\d+) tokens\)\n\n(.+)/u.exec(run.stdout);
    expect(ended, show).not.toBeNull();
    const [, turns, tokens, answer] = ended!;
    expect(Number(turns)).toBeGreaterThanOrEqual(1);
    // The server's own count: it read the prompt Keel sent.
    expect(await llama.metric('prompt_tokens_total')).toBeGreaterThan(promptTokens);
    expect(Number(tokens)).toBeGreaterThan(0);
    expect(answer!.trim()).not.toBe('');
    expect(await historySize(runIdOf(run))).toBeLessThanOrEqual(HISTORY_BOUND * Number(turns));
  });
});

describe('llama.cpp’s server with a model that never stops (--ignore-eos)', () => {
  let llama: LlamaServer;
  beforeAll(async () => {
    llama = await startLlamaServer({ extra: ['--ignore-eos'] });
  });
  afterAll(async () => {
    await llama?.close();
  });

  it('a runaway answer ends at the worker’s output cap as cut off, though the server says completed', async () => {
    const run = await runCli(runArguments('Tell me a story.'), {
      env: await keelEnvironment(llama, { KEEL_MAX_OUTPUT_TOKENS: '32' }),
    });
    const show = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.code, show).toBe(3);
    expect(run.stdout, show).toMatch(
      /■ the model's answer was cut off: max_output_tokens \(1 turn · 0 tool calls · \d+ tokens\)/u,
    );
    expect(run.stdout).not.toContain('✔ completed');
    expect(await historySize(runIdOf(run))).toBeLessThanOrEqual(HISTORY_BOUND);
  });

  it('with the default cap, a runaway answer still writing when its time is nearly up keeps what it wrote', async () => {
    // A slow machine's runaway: the default 32,768-token cap is minutes away, the turn's timeout
    // (45 s here, cut 4.5 s before it) well under one. Without the cut the attempt would time out and
    // its retry write it all again. (The timeout leaves a loaded machine time to read the prompt.)
    const run = await runCli(runArguments('Tell me a story.'), {
      env: await keelEnvironment(llama, { KEEL_MODEL_TIMEOUT_SECONDS: '45' }),
    });
    const show = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.code, show).toBe(3);
    expect(run.stdout, show).toMatch(
      /■ the model's answer was cut off: model_timeout \(1 turn · 0 tool calls · \d+ tokens\)\n\n\S/u,
    );
    expect(run.stdout).not.toContain('↻');
    expect(await historySize(runIdOf(run))).toBeLessThanOrEqual(HISTORY_BOUND);
  });

  it('cancelling the run stops the generation on the server', async () => {
    const predicted = await llama.metric('tokens_predicted_total');
    const cli: CliProcess = startCli(runArguments('Tell me a long story.'), {
      env: await keelEnvironment(llama),
    });
    try {
      await cli.waitForOutput('started.');
      const runId = runIdOf(cli);
      // Generating: left alone it writes on to Keel's default cap of 32,768 tokens (ten minutes here).
      await until(async () => (await llama.slot()).decoded > 0);
      await server.client.workflow.getHandle(runId).cancel();
      expect(await cli.exited).toBe(3);
      await until(async () => !(await llama.slot()).processing);
      const written = (await llama.metric('tokens_predicted_total')) - predicted;
      expect(written, llama.output().slice(-3000)).toBeLessThan(2_000);
      expect(llama.output()).toMatch(/stop: cancel task/u);
      expect(cli.stdout).not.toContain('✔ completed');
      expect(await historySize(runId)).toBeLessThanOrEqual(HISTORY_BOUND);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
  });
});

describe('llama.cpp’s server whose model ends every answer at once (a grammar that allows nothing)', () => {
  let llama: LlamaServer;
  beforeAll(async () => {
    llama = await startLlamaServer({ extra: ['--grammar', 'root ::= ""'] });
  });
  afterAll(async () => {
    await llama?.close();
  });

  it('an answer of nothing is never success: the turn is tried again, and keel run says so as it happens', async () => {
    const cli = startCli(runArguments('What is the capital of France?'), {
      env: await keelEnvironment(llama),
    });
    try {
      await cli.waitForOutput('started.');
      const runId = runIdOf(cli);
      // The server answers `completed`, no output, one output token; Keel fails the attempt.
      await cli.waitForOutput('trying again (attempt 2 of 8)');
      expect(cli.stdout).toMatch(
        /↻ the model call failed: .* came back completed with no text and no tool call .*; trying again \(attempt 2 of 8\)/u,
      );
      await server.client.workflow.getHandle(runId).cancel();
      expect(await cli.exited).toBe(3);
      expect(cli.stdout).not.toContain('✔ completed');
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
  });
});
