import { readFile as readFileFromDisk } from 'node:fs/promises';
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSanitizer } from '../../src/safety/sanitize.js';
import { defineTool } from '../../src/tools/define-tool.js';
import type { Tool, ToolContext, ToolOutput } from '../../src/tools/define-tool.js';
import { executeToolCall } from '../../src/tools/executor.js';
import type { ExecuteRequest, ExecutorDependencies } from '../../src/tools/executor.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { ToolError } from '../../src/tools/tool-error.js';
import { WorkspaceError } from '../../src/tools/workspace-error.js';
import { FileIdempotencyStore, MemoryIdempotencyStore } from '../../src/tools/idempotency.js';
import { deferred } from '../support/deferred.js';
import { RecordingLogger } from '../support/loggers.js';

const SECRET = 'hunter22-very-secret';
/** A secret that `JSON.stringify` escapes, so it never appears as written in JSON output. */
const QUOTED_SECRET = 'pa"ss\\word-7';

let root: string;

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'keel-executor-')));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function dependencies(tools: readonly Tool[]): ExecutorDependencies & { logger: RecordingLogger } {
  return {
    registry: new ToolRegistry(tools),
    sanitizer: createSanitizer({ secrets: [SECRET, QUOTED_SECRET], paths: [{ path: root, label: '.' }] }),
    logger: new RecordingLogger(),
    idempotencyStore: new MemoryIdempotencyStore(),
  };
}

function request(name: string, args: string | object, extra: Partial<ExecuteRequest> = {}): ExecuteRequest {
  return {
    call: { callId: 'call_1', name, argumentsJson: typeof args === 'string' ? args : JSON.stringify(args) },
    idempotencyKey: 'run-1:call_1',
    outputCharLimit: 1_000,
    ...extra,
  };
}

/** A tool with no input that returns (or throws) whatever `run` does, recording each input it got. */
function toolReturning(
  name: string,
  run: (context: ToolContext) => Promise<ToolOutput> | ToolOutput,
  options: { timeoutSeconds?: number } = {},
) {
  const inputs: unknown[] = [];
  const tool = defineTool({
    name,
    description: `The ${name} tool.`,
    schema: z.object({}),
    ...options,
    execute: (input, context) => {
      inputs.push(input);
      return run(context);
    },
  });
  return { tool, inputs };
}

const add = defineTool({
  name: 'add',
  description: 'Add two numbers.',
  schema: z.object({ a: z.number(), b: z.number(), note: z.string().optional() }),
  execute: ({ a, b, note }) => `${a + b}${note === undefined ? '' : ` (${note})`}`,
});

describe('executeToolCall', () => {
  it('runs the tool and returns its text as an ok observation', async () => {
    const observation = await executeToolCall(
      request('add', { a: 2, b: 3, note: null }),
      dependencies([add]),
    );
    expect(observation).toEqual({ callId: 'call_1', ok: true, output: '5' });
  });

  it('sends a JSON value returned by the tool as JSON text', async () => {
    const outputs: ToolOutput[] = [{ files: ['a', 'b'], count: 2 }, [1, 'two'], 42, true, null];
    for (const value of outputs) {
      const { tool } = toolReturning('json', () => value);
      const observation = await executeToolCall(request('json', {}), dependencies([tool]));
      expect(observation).toEqual({ callId: 'call_1', ok: true, output: JSON.stringify(value) });
    }
  });

  it('answers a call to an unknown tool with the names that are available', async () => {
    const { tool } = toolReturning('echo', () => 'x');
    expect(await executeToolCall(request('missing', {}), dependencies([add, tool]))).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'unknown_tool',
      message: 'There is no tool named "missing". Available tools: add, echo.',
    });
    expect(await executeToolCall(request('missing', {}), dependencies([]))).toMatchObject({
      error: 'unknown_tool',
      message: 'There is no tool named "missing". Available tools: none.',
    });
  });

  it('treats a registered tool that the run did not offer as unknown, listing only the offered tools', async () => {
    const { tool, inputs } = toolReturning('echo', () => 'x');
    const observation = await executeToolCall(
      request('echo', {}, { allowedTools: ['add'] }),
      dependencies([add, tool]),
    );
    expect(observation).toMatchObject({
      ok: false,
      error: 'unknown_tool',
      message: 'There is no tool named "echo". Available tools: add.',
    });
    expect(inputs).toEqual([]);
    expect(
      await executeToolCall(request('echo', {}, { allowedTools: [] }), dependencies([add, tool])),
    ).toMatchObject({
      error: 'unknown_tool',
      message: 'There is no tool named "echo". Available tools: none.',
    });
  });

  it('answers malformed JSON without running the tool', async () => {
    const { tool, inputs } = toolReturning('echo', () => 'x');
    const observation = await executeToolCall(request('echo', '{"a": 1,'), dependencies([tool]));
    expect(observation).toMatchObject({ callId: 'call_1', ok: false, error: 'invalid_json' });
    expect(observation.ok ? '' : observation.message).toMatch(
      /^The arguments for echo are not valid JSON \(.+\)\. Send one JSON object\.$/,
    );
    expect(inputs).toEqual([]);
  });

  it('redacts secrets that the JSON parser quotes back in its error', async () => {
    const { tool } = toolReturning('echo', () => 'x');
    // V8 quotes a short source whole: "Unexpected token 'h', "<source>" is not valid JSON".
    const observation = await executeToolCall(request('echo', SECRET), dependencies([tool]));
    expect(observation).toMatchObject({ error: 'invalid_json' });
    const message = observation.ok ? '' : observation.message;
    expect(message).not.toContain(SECRET);
    expect(message).toContain('[redacted]');
  });

  it('treats empty or blank arguments as an empty object', async () => {
    const { tool, inputs } = toolReturning('echo', () => 'ran');
    for (const argumentsJson of ['', '  \n ']) {
      expect(await executeToolCall(request('echo', argumentsJson), dependencies([tool]))).toEqual({
        callId: 'call_1',
        ok: true,
        output: 'ran',
      });
    }
    expect(inputs).toEqual([{}, {}]);
    expect(await executeToolCall(request('add', ''), dependencies([add]))).toMatchObject({
      error: 'invalid_arguments',
    });
  });

  it('lists every schema violation on its own line', async () => {
    const observation = await executeToolCall(
      request('add', { a: 'one', b: 2, x: true }),
      dependencies([add]),
    );
    expect(observation).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'invalid_arguments',
      message:
        'The arguments for add do not match its schema:\n' +
        '- a: Invalid input: expected number, received string\n' +
        '- (root): unknown key "x"',
    });
  });

  it('passes the message of a ToolError through, with secrets and the workspace path removed', async () => {
    const { tool } = toolReturning('locked', () => {
      throw new ToolError(`${path.join(root, 'db.lock')} is held (token ${SECRET}); try again later`);
    });
    expect(await executeToolCall(request('locked', {}), dependencies([tool]))).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'tool_error',
      message: './db.lock is held (token [redacted]); try again later',
    });
  });

  it('shows the model no stack trace when a ToolError message holds one, nor the message of its cause', async () => {
    const { tool } = toolReturning('db', () => {
      const cause = new Error(`connect failed with password ${SECRET}`);
      throw new ToolError(`query failed: ${cause.stack}`, { cause });
    });
    const observation = await executeToolCall(request('db', {}), dependencies([tool]));
    expect(observation).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'tool_error',
      message: 'query failed: Error: connect failed with password [redacted]',
    });
  });

  it('maps a Node file error to its meaning and its relative path (as a file tool reports it)', async () => {
    const { tool } = toolReturning('reader', () => {
      throw Object.assign(new Error('ENOENT: no such file or directory'), {
        code: 'ENOENT',
        path: path.join('missing', 'file.txt'),
      });
    });
    const deps = dependencies([tool]);
    expect(await executeToolCall(request('reader', {}), deps)).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'tool_error',
      message: `reader failed: No such file or directory: ${path.join('missing', 'file.txt')}`,
    });
    expect(deps.logger.entries).toEqual([]);
  });

  it.each([
    [
      'an absolute path outside the workspace',
      () => path.join(path.dirname(root), 'keel-absent', 'file.txt'),
    ],
    ['an absolute path inside the workspace', () => path.join(root, 'missing', 'file.txt')],
    ['a relative path that climbs out', () => path.join('..', 'outside', 'file.txt')],
  ])('leaves out the path of a Node file error that gives %s', async (_, where) => {
    const { tool } = toolReturning('reader', async () => readFileFromDisk(where(), 'utf8'));
    expect(await executeToolCall(request('reader', {}), dependencies([tool]))).toMatchObject({
      error: 'tool_error',
      message: 'reader failed: No such file or directory',
    });
  });

  it('maps a Node error code without a path to its meaning alone', async () => {
    const { tool } = toolReturning('guarded', () => {
      throw Object.assign(new Error(`EACCES: permission denied, open ${SECRET}`), { code: 'EACCES' });
    });
    expect(await executeToolCall(request('guarded', {}), dependencies([tool]))).toMatchObject({
      error: 'tool_error',
      message: 'guarded failed: Permission denied',
    });
  });

  it('hides an unexpected error behind a reference and logs it in full', async () => {
    const failure = new Error(`database password ${SECRET} rejected at /srv/keel/internal/db.ts:42`);
    const { tool } = toolReturning('internal', () => {
      throw failure;
    });
    const deps = dependencies([tool]);
    const observation = await executeToolCall(request('internal', {}), deps);
    expect(observation).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'tool_error',
      message:
        'internal failed with an internal error (reference call_1); the details are in the worker log.',
    });
    expect(deps.logger.entries).toEqual([
      { level: 'error', message: 'Tool internal failed', meta: { callId: 'call_1', error: failure } },
    ]);
    expect(deps.logger.entries[0]!.meta!.error).toBe(failure);
  });

  it('hides a thrown value that is not an Error behind a reference too', async () => {
    const thrown: unknown = 'plain string';
    const { tool } = toolReturning('odd', () => {
      throw thrown;
    });
    const deps = dependencies([tool]);
    expect(await executeToolCall(request('odd', {}), deps)).toMatchObject({
      error: 'tool_error',
      message: 'odd failed with an internal error (reference call_1); the details are in the worker log.',
    });
    expect(deps.logger.entries).toEqual([
      { level: 'error', message: 'Tool odd failed', meta: { callId: 'call_1', error: 'plain string' } },
    ]);
  });

  it('reports output that cannot be turned into JSON as a tool error, and logs it', async () => {
    const { tool } = toolReturning('bigint', () => ({ count: 10n }));
    const deps = dependencies([tool]);
    expect(await executeToolCall(request('bigint', {}), deps)).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'tool_error',
      message: 'bigint returned a result that could not be read (reference call_1).',
    });
    expect(deps.logger.entries).toHaveLength(1);
    expect(deps.logger.entries[0]).toMatchObject({
      level: 'error',
      message: 'Tool bigint returned a value that is not JSON',
      meta: { callId: 'call_1', error: expect.any(TypeError) as TypeError },
    });
  });

  it('redacts secrets from the output', async () => {
    const { tool } = toolReturning('leaky', () => `API_KEY=${SECRET}\nother=${SECRET}!`);
    expect(await executeToolCall(request('leaky', {}), dependencies([tool]))).toEqual({
      callId: 'call_1',
      ok: true,
      output: 'API_KEY=[redacted]\nother=[redacted]!',
    });
  });

  it('redacts a secret with a quote and a backslash from JSON output, where it appears escaped', async () => {
    const { tool } = toolReturning('env', () => ({ DB_PASSWORD: QUOTED_SECRET, note: `"${QUOTED_SECRET}"` }));
    const observation = await executeToolCall(request('env', {}), dependencies([tool]));
    expect(observation).toEqual({
      callId: 'call_1',
      ok: true,
      output: '{"DB_PASSWORD":"[redacted]","note":"\\"[redacted]\\""}',
    });
  });

  it('redacts secrets from the heartbeat details a tool reports', async () => {
    const { tool } = toolReturning('chatty', (context) => {
      context.heartbeat({ progress: `using ${SECRET}`, [SECRET]: [QUOTED_SECRET] });
      return 'ok';
    });
    const beats: unknown[] = [];
    await executeToolCall(
      request('chatty', {}, { heartbeat: (details) => beats.push(details) }),
      dependencies([tool]),
    );
    expect(beats).toEqual([{ progress: 'using [redacted]', '[redacted]': ['[redacted]'] }]);
  });

  it("records a side effect's result redacted, and gives the tool that same redacted result", async () => {
    const store = new MemoryIdempotencyStore();
    const seen: unknown[] = [];
    const { tool } = toolReturning('charge', async (context) => {
      const receipt = await context.once('charge', () => ({ receipt: `r-1 for ${SECRET}` }));
      seen.push(receipt);
      return receipt;
    });
    const deps = { ...dependencies([tool]), idempotencyStore: store };
    const first = await executeToolCall(request('charge', {}), deps);
    const retry = await executeToolCall(request('charge', {}), deps);
    expect(await store.claim('run-1:call_1:charge')).toEqual({
      state: 'done',
      result: { receipt: 'r-1 for [redacted]' },
    });
    expect(seen).toEqual([{ receipt: 'r-1 for [redacted]' }, { receipt: 'r-1 for [redacted]' }]);
    expect(first).toEqual(retry);
  });

  it('writes no secret, in any of its forms, into a side-effect record on disk', async () => {
    const records = await mkdtemp(path.join(tmpdir(), 'keel-executor-records-'));
    try {
      const { tool } = toolReturning('deploy', (context) =>
        context.once('deploy', () => `deployed with ${SECRET} and ${JSON.stringify({ pw: QUOTED_SECRET })}`),
      );
      const deps = { ...dependencies([tool]), idempotencyStore: new FileIdempotencyStore(records) };
      expect(await executeToolCall(request('deploy', {}), deps)).toMatchObject({ ok: true });
      const [file] = await readdir(records);
      const stored = await readFileFromDisk(path.join(records, file!), 'utf8');
      expect(stored).toContain('deployed with [redacted]');
      // Raw, JSON-escaped or escaped twice over, every form holds the secret's tail.
      expect(stored).not.toContain(SECRET);
      expect(stored).not.toContain('word-7');
    } finally {
      await rm(records, { recursive: true, force: true });
    }
  });

  it('returns output of exactly the limit whole', async () => {
    const { tool } = toolReturning('big', () => 'x'.repeat(1_000));
    expect(await executeToolCall(request('big', {}), dependencies([tool]))).toEqual({
      callId: 'call_1',
      ok: true,
      output: 'x'.repeat(1_000),
    });
  });

  it('turns output over the limit into output_too_large with a preview', async () => {
    const { tool } = toolReturning('big', () => 'x'.repeat(1_001));
    expect(await executeToolCall(request('big', {}), dependencies([tool]))).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'output_too_large',
      message:
        'The output of big was 1001 characters, more than the limit of 1000; preview holds the first 600. ' +
        'Ask for less, e.g. a narrower path or a line range.',
      preview: 'x'.repeat(600),
    });
  });

  it('redacts the preview of a huge output, a secret cut by its window included', async () => {
    const huge = `${'a'.repeat(590)}${SECRET} ${'b'.repeat(10)}${QUOTED_SECRET}${'c'.repeat(200_000)}`;
    const { tool } = toolReturning('huge', () => huge);
    const observation = await executeToolCall(request('huge', {}), dependencies([tool]));
    expect(observation).toMatchObject({ ok: false, error: 'output_too_large' });
    const { preview, message } = observation as { preview: string; message: string };
    expect(message).toContain(`was ${huge.length} characters`);
    expect(preview).toBe(`${'a'.repeat(590)}[redacted]`);
    // Wherever the preview ends, it is the start of the redacted output: no secret is cut in part.
    const redacted = dependencies([]).sanitizer.output(huge);
    for (let previewLength = 580; previewLength < 650; previewLength += 1) {
      const cut = await executeToolCall(
        request('huge', {}, { outputCharLimit: previewLength + 400 }),
        dependencies([tool]),
      );
      expect(redacted.startsWith((cut as { preview: string }).preview), String(previewLength)).toBe(true);
    }
  });

  it('does not split a surrogate pair at the end of the preview', async () => {
    const emoji = '\u{1F600}';
    const { tool } = toolReturning('emoji', () => 'a'.repeat(599) + emoji.repeat(300));
    const observation = await executeToolCall(request('emoji', {}), dependencies([tool]));
    expect(observation).toMatchObject({ error: 'output_too_large', preview: 'a'.repeat(599) });

    const { tool: aligned } = toolReturning('emoji', () => 'a'.repeat(598) + emoji.repeat(300));
    expect(await executeToolCall(request('emoji', {}), dependencies([aligned]))).toMatchObject({
      error: 'output_too_large',
      preview: 'a'.repeat(598) + emoji,
    });
  });

  it('stops a tool that ignores its signal when its timeout passes', async () => {
    const { tool } = toolReturning('stuck', () => new Promise<never>(() => undefined), {
      timeoutSeconds: 0.2,
    });
    expect(await executeToolCall(request('stuck', {}), dependencies([tool]))).toEqual({
      callId: 'call_1',
      ok: false,
      error: 'timeout',
      message: 'stuck did not finish within 0.2 seconds and was stopped.',
    });
  });

  it('aborts the signal of a tool that times out, and still reports a timeout when the tool rejects with an AbortError', async () => {
    const signals: AbortSignal[] = [];
    const { tool } = toolReturning(
      'polite',
      ({ signal }) =>
        new Promise<never>((_, reject) => {
          signals.push(signal);
          signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), {
            once: true,
          });
        }),
      { timeoutSeconds: 0.2 },
    );
    expect(await executeToolCall(request('polite', {}), dependencies([tool]))).toMatchObject({
      error: 'timeout',
      message: 'polite did not finish within 0.2 seconds and was stopped.',
    });
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
  });

  it('rejects with the reason of an outside abort that arrives mid-call, and aborts the tool', async () => {
    const started = deferred<AbortSignal>();
    const { tool } = toolReturning(
      'waiting',
      ({ signal }) => {
        started.resolve(signal);
        return new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
        );
      },
      { timeoutSeconds: 30 },
    );
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    const pending = executeToolCall(
      request('waiting', {}, { signal: controller.signal }),
      dependencies([tool]),
    );
    // Asserted below, once aborted; until then a rejection must not go unhandled.
    pending.catch(() => undefined);
    const toolSignal = await started.promise;
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(toolSignal.aborted).toBe(true);
    expect(toolSignal.reason).toBe(reason);
  });

  it('rejects with the outside abort reason even when the tool ignores its signal', async () => {
    const started = deferred();
    const { tool } = toolReturning(
      'deaf',
      () => {
        started.resolve();
        return new Promise<never>(() => undefined);
      },
      { timeoutSeconds: 30 },
    );
    const controller = new AbortController();
    const reason = new Error('worker shutting down');
    const pending = executeToolCall(request('deaf', {}, { signal: controller.signal }), dependencies([tool]));
    pending.catch(() => undefined);
    await started.promise;
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('rejects at once when the outside signal is already aborted', async () => {
    const { tool } = toolReturning('deaf', () => new Promise<never>(() => undefined), { timeoutSeconds: 30 });
    const reason = new Error('already cancelled');
    await expect(
      executeToolCall(request('deaf', {}, { signal: AbortSignal.abort(reason) }), dependencies([tool])),
    ).rejects.toBe(reason);
  });

  it('rejects with the outside abort reason even when the tool then throws a ToolError', async () => {
    const started = deferred<AbortSignal>();
    const { tool } = toolReturning('grumpy', ({ signal }) => {
      started.resolve(signal);
      return new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => reject(new ToolError('interrupted')), { once: true }),
      );
    });
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    const pending = executeToolCall(
      request('grumpy', {}, { signal: controller.signal }),
      dependencies([tool]),
    );
    pending.catch(() => undefined);
    await started.promise;
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('gives the tool the call id, idempotency key and a heartbeat that reaches the caller, but no workspace', async () => {
    const contexts: ToolContext[] = [];
    const { tool } = toolReturning('probe', (context) => {
      contexts.push(context);
      context.heartbeat({ step: 1 });
      context.heartbeat();
      return 'ok';
    });
    const beats: unknown[] = [];
    const observation = await executeToolCall(
      request('probe', {}, { idempotencyKey: 'wf-7:call_1', heartbeat: (details) => beats.push(details) }),
      dependencies([tool]),
    );
    expect(observation).toMatchObject({ ok: true });
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({ callId: 'call_1', idempotencyKey: 'wf-7:call_1' });
    expect(Object.keys(contexts[0]!).sort()).toEqual([
      'callId',
      'heartbeat',
      'idempotencyKey',
      'once',
      'signal',
    ]);
    expect(contexts[0]!.signal.aborted).toBe(false);
    expect(beats).toEqual([{ step: 1 }, undefined]);
  });

  it('gives the tool a heartbeat that does nothing when the caller has none', async () => {
    const { tool } = toolReturning('probe', (context) => {
      context.heartbeat('tick');
      return 'ok';
    });
    expect(await executeToolCall(request('probe', {}), dependencies([tool]))).toMatchObject({
      ok: true,
      output: 'ok',
    });
  });
});

describe('a ToolError from another copy of Keel', () => {
  it('is still a ToolError: a tools module may load its own copy of the package', () => {
    // What a second copy's class makes: another class, the same brand.
    const brand = Symbol.for('keel.ToolError');
    const foreign = Object.assign(new Error('No order A-9'), { name: 'ToolError', [brand]: true });
    expect(foreign instanceof ToolError).toBe(true);
    expect(new Error('plain') instanceof ToolError).toBe(false);
    expect(new ToolError('mine') instanceof WorkspaceError).toBe(false);
  });
});
