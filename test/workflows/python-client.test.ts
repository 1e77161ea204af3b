import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import { echoTool } from '../support/test-tools.js';

/** The Python SDK the example is run with; `.ci/run` installs it. */
const PYTHON_SDK = 'temporalio==1.35.0';

const contract = readFileSync(path.resolve(import.meta.dirname, '../../docs/contract.md'), 'utf8');

/** The Python example of docs/contract.md, as a reader copies it. */
function pythonExample(): string {
  const section = contract.split('\n### Python')[1]?.split('\n### ')[0] ?? '';
  const code = /```python\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error('docs/contract.md has no Python example');
  return code;
}

/** The Python example of docs/contract.md's "Structured output". */
function structuredOutputExample(): string {
  const section = contract.split('\n## Structured output')[1]?.split('\n## ')[0] ?? '';
  const code = /```python\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error('docs/contract.md has no Python example of structured output');
  return code;
}

/**
 * A docs example pointed at the test's server, task queue and a fresh workflow id (instead of the
 * `id` it names), ending as the docs advise for scripts.
 */
function pointedAt(code: string, taskQueue: string, id: string): string {
  code = replaceAll(code, '"localhost:7233"', JSON.stringify(inject('temporalAddress')));
  code = replaceAll(code, 'namespace="default"', `namespace=${JSON.stringify(inject('temporalNamespace'))}`);
  code = replaceAll(code, 'task_queue="keel"', `task_queue=${JSON.stringify(taskQueue)}`);
  code = replaceAll(code, JSON.stringify(id), JSON.stringify(`python-${randomUUID()}`));
  // A short-lived Python client can abort (SIGABRT) while the interpreter tears down the SDK's
  // Rust threads, after its work is done (temporalio/sdk-python#300; docs/contract.md says so):
  // end the way the docs advise for scripts, so the test judges the example, not the teardown.
  return code + '\nimport os, sys\nsys.stdout.flush()\nos._exit(0)\n';
}

/** Replaces `from` (which must be there, so the example cannot drift away from this test) with `to`. */
function replaceAll(code: string, from: string, to: string): string {
  expect(code, `the Python example names ${from}`).toContain(from);
  return code.split(from).join(to);
}

/** Runs Python code on stdin; rejects with what it printed when it fails. */
function runPython(code: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile('python3', ['-'], { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error === null) resolve({ stdout, stderr });
      else
        reject(
          new Error(
            `python3 failed (exit code ${String(error.code)}, signal ${String(error.signal)}): ${error.message}\n${stdout}\n${stderr}`,
          ),
        );
    });
    child.stdin!.end(code);
  });
}

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

describe("docs/contract.md's Python example", () => {
  it('starts a run with the Python SDK, and reads the result of a run that stopped from its failure', async () => {
    const sdk = await runPython('import temporalio\nprint(temporalio.__version__)').catch(() => undefined);
    if (sdk === undefined) {
      throw new Error(
        `This test runs the Python example; install its SDK: python3 -m pip install ${PYTHON_SDK}`,
      );
    }
    // The example asks for 10 turns; the model calls a tool on every one of them.
    const steps = Array.from({ length: 10 }, (_, index) =>
      reply.calls({ name: 'echo', arguments: { text: String(index) } }),
    );
    await withScenario(server, steps, { tools: [echoTool] }, async ({ taskQueue, model }) => {
      const code = pointedAt(pythonExample(), taskQueue, 'ticket-4711');
      const { stdout } = await runPython(code);
      expect(stdout.trim().split('\n').at(-1)).toBe('KeelError.MaxTurnsExceeded max_turns');
      expect(model.requests[0]?.body.input).toEqual([
        { type: 'message', role: 'user', content: 'Read notes.txt and propose a reply to ticket 4711.' },
      ]);
    });
  });

  it('starts a run with an output schema and reads the checked value into a dataclass', async () => {
    const answer = { label: 'bug', priority: 2 };
    await withScenario(server, [reply.text(JSON.stringify(answer))], {}, async ({ taskQueue, model }) => {
      const code = pointedAt(structuredOutputExample(), taskQueue, 'triage-4712');
      const { stdout } = await runPython(code);
      expect(stdout.trim().split('\n').at(-1)).toBe('bug 2');
      expect(model.requests[0]?.body.text).toMatchObject({
        format: { type: 'json_schema', name: 'ticket', strict: true },
      });
    });
  });
});
