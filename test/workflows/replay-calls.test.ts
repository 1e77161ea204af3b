import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunReplayArgs } from '../../src/contract/replay.js';
import type { RunResult } from '../../src/contract/run-result.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { canonicalArguments } from '../../src/workflows/replay-calls.js';
import { connectTestServer } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { withScenario } from '../support/scenario.js';
import { reply } from '../support/scripted-model.js';
import type { ScriptedModel } from '../support/scripted-model.js';
import { deployTool } from '../support/test-tools.js';

let server: TestServer;
beforeAll(async () => {
  server = await connectTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A tool that records every time it really ran: replayed calls must leave `ran` empty. */
function recordingTool(name: string, options: { readOnly?: boolean } = {}) {
  const ran: unknown[] = [];
  const tool = defineTool({
    name,
    description: `The ${name} tool.`,
    schema: z.object({ a: z.number().optional(), b: z.number().optional(), text: z.string().optional() }),
    ...(options.readOnly === true ? { readOnly: true } : {}),
    execute: (input) => {
      ran.push(input);
      return `${name} ran`;
    },
  });
  return { tool, ran };
}

/** Every `function_call_output` the model was sent, in order: what each call was answered. */
function outputs(model: ScriptedModel): Array<{ call_id: unknown; output: unknown }> {
  return model.requests.flatMap((request) =>
    request.body.input
      .filter((item) => item.type === 'function_call_output')
      .map((item) => ({ call_id: item.call_id, output: item.output })),
  );
}

const answer = (output: string) => ({ ok: true as const, output });

describe('canonical arguments', () => {
  it('ignores key order and spacing, keeps values and prototype-named keys apart', () => {
    expect(canonicalArguments('{"b":2,"a":{"y":1,"x":[1,{"q":1,"p":2}]}}')).toBe(
      canonicalArguments('{ "a": {"x": [1, {"p":2,"q":1}], "y": 1}, "b": 2 }'),
    );
    expect(canonicalArguments('{"a":1}')).not.toBe(canonicalArguments('{"a":"1"}'));
    expect(canonicalArguments('{"__proto__":{"a":1}}')).not.toBe(canonicalArguments('{}'));
    expect(canonicalArguments('{"__proto__":{"a":1}}')).toBe(canonicalArguments('{ "__proto__": {"a": 1} }'));
    // Unparseable text compares as itself, and never equals a parsed value's form.
    expect(canonicalArguments('{"a":')).toBe(canonicalArguments('{"a":'));
    expect(canonicalArguments('"x"')).not.toBe(canonicalArguments('x'));
    // Too deep to sort: compared as raw text, the same on every worker.
    const deep = '['.repeat(100) + ']'.repeat(100);
    expect(canonicalArguments(deep)).toBe(`raw:${deep}`);
  });
});

describe('replayed tool calls', () => {
  it('answers a matched call from the recording, whatever its key order, without running or asking', async () => {
    const side = recordingTool('side');
    const deploy = deployTool();
    const replay: RunReplayArgs = {
      calls: [
        { name: 'side', argumentsJson: '{"b":2,"a":1}', answer: answer('recorded side') },
        {
          name: 'deploy',
          argumentsJson: '{"service":"api","replicas":2}',
          answer: { ok: false, error: 'tool_error', message: 'recorded failure' },
        },
      ],
    };
    await withScenario(
      server,
      [
        reply.calls(
          { name: 'side', arguments: '{ "a": 1, "b": 2 }', callId: 'new_1' },
          { name: 'deploy', arguments: { replicas: 2, service: 'api' }, callId: 'new_2' },
        ),
        reply.text('done'),
      ],
      { tools: [side.tool, deploy.tool] },
      async ({ run, model, keel }) => {
        const { runId, result } = await run({ task: 'replay', replay });
        expect(result).toMatchObject({ status: 'completed', finalText: 'done', toolCalls: 2 });
        expect(side.ran).toEqual([]);
        expect(deploy.ran).toEqual([]);
        expect(outputs(model)).toEqual([
          { call_id: 'new_1', output: 'recorded side' },
          {
            call_id: 'new_2',
            output: JSON.stringify({ error: 'tool_error', message: 'recorded failure' }),
          },
        ]);
        // The run's own record has the observations, as for any call; no approval was asked.
        const state = await keel.getRunState(runId);
        expect(state.events.filter((event) => event.kind === 'approval')).toEqual([]);
        expect(
          state.events.flatMap((event) =>
            event.kind === 'observation' ? [[event.callId, event.name, event.ok]] : [],
          ),
        ).toEqual([
          ['new_1', 'side', true],
          ['new_2', 'deploy', false],
        ]);
      },
    );
  });

  it('gives the n-th matching call the n-th answer, then the last again, across continue-as-new', async () => {
    const side = recordingTool('side');
    const replay: RunReplayArgs = {
      calls: [
        { name: 'side', argumentsJson: '{"text":"x"}', answer: answer('first') },
        { name: 'side', argumentsJson: '{"text":"other"}', answer: answer('other') },
        { name: 'side', argumentsJson: '{"text":"x"}', answer: answer('second') },
      ],
    };
    await withScenario(
      server,
      [
        reply.calls({ name: 'side', arguments: { text: 'x' } }),
        reply.calls(
          { name: 'side', arguments: { text: 'x' } },
          { name: 'side', arguments: { text: 'other' } },
        ),
        reply.calls({ name: 'side', arguments: { text: 'x' } }),
        reply.text('done'),
      ],
      { tools: [side.tool] },
      async ({ run, model, keel }) => {
        const { runId, result } = await run({ task: 'replay', replay, continueAsNewAfterTurns: 1 });
        expect(result).toMatchObject({ status: 'completed', turns: 4 });
        expect((await keel.getRunState(runId)).continuedAsNew).toBe(3);
        expect(side.ran).toEqual([]);
        expect(outputs(model).map((entry) => entry.output)).toEqual(['first', 'second', 'other', 'second']);
      },
    );
  });

  it('refuses an unmatched call by default: not_recorded, and the tool does not run', async () => {
    const side = recordingTool('side', { readOnly: true });
    await withScenario(
      server,
      [reply.calls({ name: 'side', arguments: { a: 1 }, callId: 'c1' }), reply.text('done')],
      { tools: [side.tool] },
      async ({ run, model }) => {
        const { result } = await run({
          task: 'replay',
          replay: { calls: [{ name: 'side', argumentsJson: '{"a":2}', answer: answer('recorded') }] },
        });
        expect(result.status).toBe('completed');
        expect(side.ran).toEqual([]);
        const [refused] = outputs(model);
        expect(refused?.call_id).toBe('c1');
        const body = JSON.parse(String(refused?.output)) as { error: string; message: string };
        expect(body.error).toBe('not_recorded');
        expect(body.message).toMatch(/not run.*no answer for side/);
      },
    );
  });

  it('under `run`, runs unmatched read-only and allowed tools only', async () => {
    const look = recordingTool('look', { readOnly: true });
    const write = recordingTool('write');
    const send = recordingTool('send');
    const script = () => [
      reply.calls(
        { name: 'look', arguments: { a: 1 } },
        { name: 'write', arguments: { a: 1 } },
        { name: 'send', arguments: { a: 1 } },
      ),
      reply.text('done'),
    ];
    await withScenario(
      server,
      script(),
      { tools: [look.tool, write.tool, send.tool] },
      async ({ run, model }) => {
        const { result } = await run({
          task: 'replay',
          replay: { calls: [], unmatched: 'run', allowTools: ['send'] },
        });
        expect(result.status).toBe('completed');
        expect(look.ran).toEqual([{ a: 1 }]);
        expect(write.ran).toEqual([]);
        expect(send.ran).toEqual([{ a: 1 }]);
        const [looked, written, sent] = outputs(model).map((entry) => String(entry.output));
        expect(looked).toBe('look ran');
        const refused = JSON.parse(written!) as { error: string; message: string };
        expect(refused.error).toBe('not_recorded');
        expect(refused.message).toMatch(/read-only/);
        expect(sent).toBe('send ran');
      },
    );
  });

  it('under `run`, refuses an unmatched call that would ask for approval, even an allowed one: nobody approves in a replay', async () => {
    const deploy = deployTool();
    const look = recordingTool('look', { readOnly: true });
    const script = () => [
      reply.calls(
        { name: 'deploy', arguments: { service: 'api', replicas: 2 } },
        { name: 'look', arguments: { a: 1 } },
      ),
      reply.text('done'),
    ];
    await withScenario(server, script(), { tools: [deploy.tool, look.tool] }, async ({ run, model }) => {
      const { result } = await run({
        task: 'replay',
        approvalTools: ['look'],
        replay: { calls: [], unmatched: 'run', allowTools: ['deploy'] },
      });
      expect(result.status).toBe('completed');
      expect(deploy.ran).toEqual([]);
      expect(look.ran).toEqual([]);
      for (const output of outputs(model).map((entry) => String(entry.output))) {
        const refused = JSON.parse(output) as { error: string; message: string };
        expect(refused.error).toBe('not_recorded');
        expect(refused.message).toMatch(/approve/);
      }
      expect(outputs(model)).toHaveLength(2);
    });
  });

  it('under `diverge`, fails the run with KeelError.Diverged naming the turn and call, running none of its calls', async () => {
    const side = recordingTool('side', { readOnly: true });
    await withScenario(
      server,
      [
        reply.calls({ name: 'side', arguments: { a: 1 } }),
        reply.calls({ name: 'side', arguments: { a: 1 } }, { name: 'side', arguments: { text: 'new' } }),
      ],
      { tools: [side.tool] },
      async ({ run }) => {
        const { result } = await run({
          task: 'replay',
          replay: {
            calls: [{ name: 'side', argumentsJson: '{"a":1}', answer: answer('recorded') }],
            unmatched: 'diverge',
          },
        });
        expect(result).toMatchObject({ status: 'failed', errorType: 'KeelError.Diverged', turns: 2 });
        expect((result as Extract<RunResult, { status: 'failed' }>).reason).toMatch(
          /at turn 2: .*side\(\{"text":"new"\}\)/,
        );
        expect(side.ran).toEqual([]);
      },
    );
  });

  it('matches no prototype name: `__proto__` and `toString` calls are answered only by their own recording', async () => {
    const proto = recordingTool('__proto__');
    const toString = recordingTool('toString');
    await withScenario(
      server,
      [
        reply.calls(
          { name: 'toString', arguments: {} },
          { name: '__proto__', arguments: {} },
          { name: '__proto__', arguments: '{"__proto__":{"a":1}}' },
        ),
        reply.text('done'),
      ],
      { tools: [proto.tool, toString.tool] },
      async ({ run, model }) => {
        const { result } = await run({
          task: 'replay',
          replay: {
            calls: [
              { name: '__proto__', argumentsJson: '{"__proto__":{"a":1}}', answer: answer('own') },
              { name: 'constructor', argumentsJson: '{}', answer: answer('wrong') },
            ],
          },
        });
        expect(result.status).toBe('completed');
        expect(proto.ran).toEqual([]);
        expect(toString.ran).toEqual([]);
        const [first, second, third] = outputs(model).map((entry) => String(entry.output));
        expect(JSON.parse(first!)).toMatchObject({ error: 'not_recorded' });
        expect(JSON.parse(second!)).toMatchObject({ error: 'not_recorded' });
        expect(third).toBe('own');
      },
    );
  });
});
