import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeelClient } from '../../src/client.js';
import type { CliProcess } from '../support/cli.js';
import { freePort } from '../support/free-port.js';
import { connectTestServer, temporaryWorkspace } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import { Collector } from './collector.js';
import { MARKERS, MODEL, named, startWorker } from './telemetry-run.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** Ends a worker process the test started, if it still runs. */
async function stop(worker: CliProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (worker === undefined || worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  worker.child.kill(signal);
  await worker.exited;
}

describe('a traced run across a worker killed mid-turn', () => {
  it('stays one trace: the retried turn on the next worker continues the run span', async () => {
    const collector = await Collector.start();
    // Turn two hangs on the first worker, which is killed then; the next worker asks again.
    const model = await ScriptedModel.start([
      reply.calls({ name: 'read_file', arguments: { path: 'notes.txt' } }),
      reply.hang(),
      reply.text(MARKERS.answer),
    ]);
    const workspace = await temporaryWorkspace();
    await writeFile(path.join(workspace, 'notes.txt'), 'notes\n');
    const settings = {
      OPENAI_BASE_URL: model.url,
      KEEL_MODEL_MODE: 'foreground',
      KEEL_TASK_QUEUE: `keel-telemetry-restart-${randomUUID()}`,
      KEEL_WORKSPACE: workspace,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    };
    let first: CliProcess | undefined;
    let second: CliProcess | undefined;
    try {
      first = await startWorker(settings);
      const keel = new KeelClient(server.client, settings.KEEL_TASK_QUEUE);
      const runId = await keel.startRun({ task: MARKERS.task, heartbeatTimeoutSeconds: 2 });
      await model.waitForRequests(2);
      await stop(first, 'SIGKILL');
      second = await startWorker({ ...settings, KEEL_METRICS_PROMETHEUS: `127.0.0.1:${await freePort()}` });
      expect(await keel.waitForResult(runId)).toMatchObject({
        status: 'completed',
        finalText: MARKERS.answer,
      });
      await stop(second, 'SIGTERM');
      const spans = await collector.stop();

      // What the killed worker had not sent yet is lost; what the next one sent continues its trace.
      // (A failure names every trace's spans: which span started a trace of its own.)
      const traces = new Map<string, string[]>();
      for (const span of spans) traces.set(span.traceId, [...(traces.get(span.traceId) ?? []), span.name]);
      expect(traces.size, JSON.stringify([...traces.values()])).toBe(1);
      const [agent] = named(spans, 'invoke_agent');
      expect(agent?.attributes['keel.run.status']).toBe('completed');
      const retried = named(spans, `chat ${MODEL}`).find(
        (span) => span.attributes['gen_ai.response.id'] === 'resp_3',
      );
      expect(retried).toBeDefined();
      const attempt = spans.find((span) => span.spanId === retried!.parentSpanId);
      expect(attempt?.name).toBe('RunActivity:keel.callModel');
      // Its parent is the schedule span the first worker made, replayed with the same id by the second.
      expect(attempt?.parentSpanId).toBeDefined();
      const scheduled = spans.find((span) => span.spanId === attempt!.parentSpanId);
      if (scheduled !== undefined) expect(scheduled.parentSpanId).toBe(agent!.spanId);
    } finally {
      await stop(first, 'SIGKILL');
      await stop(second, 'SIGKILL');
      await collector.stop();
      await model.close();
    }
  }, 1_200_000);
});

describe('a collector that cannot be reached', () => {
  it('costs the spans, not the run, and the worker says which setting points there', async () => {
    const model = await ScriptedModel.start([reply.text(MARKERS.answer)]);
    const workspace = await temporaryWorkspace();
    const taskQueue = `keel-telemetry-unreachable-${randomUUID()}`;
    // A port nothing listens on: taken and released.
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    let worker: CliProcess | undefined;
    try {
      worker = await startWorker({
        OPENAI_BASE_URL: model.url,
        KEEL_TASK_QUEUE: taskQueue,
        KEEL_WORKSPACE: workspace,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      });
      const keel = new KeelClient(server.client, taskQueue);
      const runId = await keel.startRun({ task: MARKERS.task });
      expect(await keel.waitForResult(runId)).toMatchObject({
        status: 'completed',
        finalText: MARKERS.answer,
      });
      // On shutdown the worker sends what it holds, which fails and is said.
      await stop(worker, 'SIGTERM');
      expect(worker.stderr).toContain(`could not export`);
      expect(worker.stderr).toContain(`${endpoint}/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT`);
      expect(await worker.exited).toBe(0);
    } finally {
      await stop(worker, 'SIGKILL');
      await model.close();
    }
  }, 120_000);
});
