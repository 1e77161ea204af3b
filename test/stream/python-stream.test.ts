import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';

const contract = readFileSync(path.resolve(import.meta.dirname, '../../docs/contract.md'), 'utf8');

/** The stream example of docs/contract.md, as a reader copies it. */
function pythonStreamExample(): string {
  const section = contract.split("\n### Reading the run's log from Python")[1]?.split('\n### ')[0] ?? '';
  const code = /```python\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error('docs/contract.md has no Python stream example');
  return code;
}

function replaceAll(code: string, from: string, to: string): string {
  expect(code, `the Python example names ${from}`).toContain(from);
  return code.split(from).join(to);
}

function runPython(code: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('python3', ['-'], { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else reject(new Error(`python3 failed: ${error.message}\n${stdout}\n${stderr}`));
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

const ANSWER = 'Hello there, from a streamed answer.';

describe("docs/contract.md's Python stream example", () => {
  it("prints each turn's text once, whole, and ends with the run", async () => {
    // The first attempt's connection drops mid-text: the log the example reads has the turn once.
    const steps = [reply.streamed(reply.text(ANSWER), { cutAfter: 2 }), reply.text(ANSWER)];
    await withScenario(server, steps, { modelMode: 'foreground' }, async ({ taskQueue }) => {
      const workflowId = `python-stream-${randomUUID()}`;
      let code = pythonStreamExample();
      code = replaceAll(code, '"localhost:7233"', JSON.stringify(inject('temporalAddress')));
      code = replaceAll(
        code,
        'namespace="default"',
        `namespace=${JSON.stringify(inject('temporalNamespace'))}`,
      );
      code = replaceAll(code, 'task_queue="keel"', `task_queue=${JSON.stringify(taskQueue)}`);
      code = replaceAll(code, '"hello-1"', JSON.stringify(workflowId));
      // As docs/contract.md advises for scripts (temporalio/sdk-python#300).
      code += '\nimport os, sys\nsys.stdout.flush()\nos._exit(0)\n';
      const output = await runPython(code);
      const lines = output.trim().split('\n');
      // Once as it is read, once as the final answer.
      expect(output.split(ANSWER)).toHaveLength(3);
      expect(lines.at(-2)).toBe('[run completed]');
      expect(lines.at(-1)).toBe(`final: ${ANSWER}`);
    });
  });
});
