import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeelClient } from '../../src/client.js';
import type { CliProcess } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { waitForState } from '../support/run-state.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { startWorker } from './telemetry-run.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The value of the sample of `name` on `taskQueue` with `labels`, in a Prometheus scrape. */
function sample(metrics: string, name: string, labels: Record<string, string>): number | undefined {
  const line = metrics
    .split('\n')
    .find(
      (each) =>
        each.startsWith(`${name}{`) &&
        Object.entries(labels).every(([key, wanted]) => each.includes(`${key}="${wanted}"`)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('the approval metrics', () => {
  it('count the calls waiting for approval, and the decisions as they arrive', async () => {
    const model = await ScriptedModel.start([
      reply.calls(
        { name: 'read_file', arguments: { path: 'a.txt' } },
        { name: 'read_file', arguments: { path: 'b.txt' } },
      ),
      reply.text('done'),
    ]);
    const workspace = await temporaryWorkspace();
    await writeFile(path.join(workspace, 'a.txt'), 'a\n');
    await writeFile(path.join(workspace, 'b.txt'), 'b\n');
    const taskQueue = `keel-telemetry-approvals-${randomUUID()}`;
    const port = await freePort();
    const scrape = async () => await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    let worker: CliProcess | undefined;
    try {
      worker = await startWorker({
        OPENAI_BASE_URL: model.url,
        KEEL_TASK_QUEUE: taskQueue,
        KEEL_WORKSPACE: workspace,
        KEEL_METRICS_PROMETHEUS: `127.0.0.1:${port}`,
      });
      const keel = new KeelClient(server.client, taskQueue);
      const runId = await keel.startRun({ task: 'read both', approvalTools: ['read_file'] });
      const labels = { task_queue: taskQueue };
      // Approve the first call, reject the second; the gauge shows what waits each time.
      for (const decide of [
        (callId: string) => keel.approveCall(runId, callId),
        (callId: string) => keel.rejectCall(runId, callId, 'not that one'),
      ]) {
        const { pendingApprovals } = await waitForState(
          keel,
          runId,
          (state) => state.pendingApprovals.length > 0,
        );
        expect(sample(await scrape(), 'keel_approvals_waiting', labels)).toBe(pendingApprovals.length);
        await decide(pendingApprovals[0]!.callId);
      }
      expect(await keel.waitForResult(runId)).toMatchObject({ status: 'completed' });
      const metrics = await scrape();
      expect(sample(metrics, 'keel_approvals_waiting', labels)).toBe(0);
      expect(sample(metrics, 'keel_approvals_decided_total', { ...labels, decision: 'approve' })).toBe(1);
      expect(sample(metrics, 'keel_approvals_decided_total', { ...labels, decision: 'reject' })).toBe(1);
      expect(sample(metrics, 'keel_tool_calls_total', { ...labels, tool: 'read_file', outcome: 'ok' })).toBe(
        1,
      );
      model.assertDone();
    } finally {
      if (worker && worker.child.exitCode === null) {
        worker.child.kill('SIGTERM');
        await worker.exited;
      }
      await model.close();
    }
  }, 120_000);
});
