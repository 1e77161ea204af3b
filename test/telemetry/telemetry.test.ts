import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import type { CollectedSpan } from './collector.js';
import { allAttributeText, MARKERS, MODEL, named, tracedRun } from './telemetry-run.js';
import type { TracedRun } from './telemetry-run.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** The span's ancestors, nearest first, among `spans`. */
function ancestors(span: CollectedSpan, spans: CollectedSpan[]): CollectedSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const chain: CollectedSpan[] = [];
  for (let parent = byId.get(span.parentSpanId ?? ''); parent; parent = byId.get(parent.parentSpanId ?? '')) {
    chain.push(parent);
  }
  return chain;
}

describe('tracing a run to a real OpenTelemetry Collector', () => {
  let run: TracedRun;
  beforeAll(async () => {
    run = await tracedRun(server);
  }, 1_200_000);

  it('completes the run', () => {
    expect(run.result).toMatchObject({ status: 'completed', finalText: MARKERS.answer });
  });

  it('puts the run, its two model turns and its two tool calls in one trace, each under the run span', () => {
    const { spans } = run;
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    const [agent] = named(spans, 'invoke_agent');
    expect(agent?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': run.runId,
      'keel.run.status': 'completed',
      'gen_ai.usage.input_tokens': 201,
      'gen_ai.usage.output_tokens': 23,
    });
    // Temporal's own span for the workflow is the run span's parent, and the trace's root.
    expect(ancestors(agent!, spans).map((span) => span.name)).toEqual(['RunWorkflow:agentRun']);
    const chats = named(spans, `chat ${MODEL}`);
    const tools = named(spans, 'execute_tool read_file');
    expect(chats).toHaveLength(2);
    expect(tools).toHaveLength(2);
    for (const span of [...chats, ...tools]) {
      const chain = ancestors(span, spans).map((each) => each.name);
      expect(chain[0]).toMatch(/^RunActivity:keel\.(callModel|executeTool)$/);
      expect(chain).toContain('invoke_agent');
    }
    // Workflow spans name the run, not what it wrote (the SDK would copy memo and last failure on).
    const [workflow] = named(spans, 'RunWorkflow:agentRun');
    expect(workflow?.attributes).toMatchObject({ workflowId: run.runId, workflowType: 'agentRun' });
    expect(Object.keys(workflow!.attributes)).not.toContain('memo');
    expect(Object.keys(workflow!.attributes)).not.toContain('lastFailure');
    // Every parent a span names was received: nothing dangles.
    const ids = new Set(spans.map((span) => span.spanId));
    expect(spans.filter((span) => span.parentSpanId !== undefined && !ids.has(span.parentSpanId))).toEqual(
      [],
    );
  });

  it('describes model turns with the GenAI conventions', () => {
    const chats = named(run.spans, `chat ${MODEL}`);
    const first = chats.find((span) => span.attributes['gen_ai.usage.input_tokens'] === 100);
    const second = chats.find((span) => span.attributes['gen_ai.usage.input_tokens'] === 101);
    expect(first?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': MODEL,
      'gen_ai.response.model': MODEL,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.output_tokens': 12,
    });
    expect(first?.attributes['gen_ai.response.id']).toMatch(/^resp_/);
    expect(second?.attributes).toMatchObject({
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.output_tokens': 11,
    });
  });

  it('describes tool calls with their name, call id and outcome', () => {
    const tools = named(run.spans, 'execute_tool read_file');
    expect(tools.map((span) => span.attributes['gen_ai.tool.call.id']).sort()).toEqual([
      'call_1_1',
      'call_1_2',
    ]);
    const ok = tools.find((span) => span.attributes['keel.tool.outcome'] === 'ok');
    const failed = tools.find((span) => span.attributes['keel.tool.outcome'] !== 'ok');
    expect(ok?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'read_file',
    });
    expect(ok?.attributes['error.type']).toBeUndefined();
    expect(failed?.attributes['error.type']).toBe(failed?.attributes['keel.tool.outcome']);
    expect(failed?.attributes['error.type']).toMatch(/^[a-z_]+$/);
  });

  it('keeps the task, the file read and the answer out of every span', () => {
    const text = allAttributeText(run.spans);
    for (const marker of Object.values(MARKERS)) expect(text).not.toContain(marker.slice(0, 17));
  });
});

describe("the worker's Prometheus endpoint (KEEL_METRICS_PROMETHEUS)", () => {
  let run: TracedRun;
  beforeAll(async () => {
    run = await tracedRun(server);
  }, 1_200_000);

  it('passes `promtool check metrics`', () => {
    const check = spawnSync('promtool', ['check', 'metrics'], { input: run.metrics, encoding: 'utf8' });
    expect(check.error).toBeUndefined();
    expect({ status: check.status, output: check.stdout + check.stderr }).toEqual({ status: 0, output: '' });
  });

  it("serves the SDK's own metrics beside Keel's", () => {
    expect(run.metrics).toMatch(
      /^temporal_activity_execution_latency_seconds_count\{[^}]*activity_type="keel\.callModel"[^}]*\} 2$/m,
    );
  });

  it('counts tokens and cost by model, tool outcomes by code and turn latency', () => {
    const value = (name: string, labels: Record<string, string>): number | undefined => {
      const line = run.metrics
        .split('\n')
        .find(
          (each) =>
            each.startsWith(`${name}{`) &&
            Object.entries(labels).every(([key, wanted]) => each.includes(`${key}="${wanted}"`)),
        );
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    expect(value('keel_model_tokens_total', { model: MODEL, type: 'input' })).toBe(201);
    expect(value('keel_model_tokens_total', { model: MODEL, type: 'output' })).toBe(23);
    // 201 input tokens at $1 and 23 output tokens at $2 per million.
    expect(value('keel_model_cost_micro_usd_total', { model: MODEL })).toBe(247);
    expect(value('keel_tool_calls_total', { tool: 'read_file', outcome: 'ok' })).toBe(1);
    expect(value('keel_tool_calls_total', { tool: 'read_file', outcome: 'tool_error' })).toBe(1);
    expect(value('keel_model_turn_latency_seconds_count', { model: MODEL, outcome: 'ok' })).toBe(2);
  });
});

describe('tracing with KEEL_OTEL_CAPTURE_CONTENT=true', () => {
  it('puts the task, the tool result and the answer on the spans', async () => {
    const run = await tracedRun(server, { KEEL_OTEL_CAPTURE_CONTENT: 'true' });
    expect(run.result.status).toBe('completed');
    const [first] = named(run.spans, `chat ${MODEL}`).filter(
      (span) => span.attributes['gen_ai.usage.input_tokens'] === 100,
    );
    expect(first?.attributes['gen_ai.input.messages']).toContain(MARKERS.task);
    const results = named(run.spans, 'execute_tool read_file').map(
      (span) => span.attributes['gen_ai.tool.call.result'],
    );
    expect(results.join('\n')).toContain(MARKERS.file);
    expect(allAttributeText(named(run.spans, `chat ${MODEL}`))).toContain(MARKERS.answer);
  }, 1_200_000);
});
