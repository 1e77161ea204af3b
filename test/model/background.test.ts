import { getEventListeners } from 'node:events';
import type { ResponseCreateParamsNonStreaming } from 'openai/resources/responses/responses';
import { afterEach, describe, expect, it } from 'vitest';
import { runBackgroundResponse } from '../../src/model/background.js';
import { ModelError } from '../../src/model/model-error.js';
import { createOpenAIClient } from '../../src/model/client.js';
import { deferred } from '../support/deferred.js';
import { reply, ScriptedModel } from '../support/scripted-model.js';
import type { ScriptStep } from '../support/scripted-model.js';

const params: ResponseCreateParamsNonStreaming = { model: 'scripted', input: 'hello', store: true };
const fast = { initialMs: 5, maxMs: 20 };
let model: ScriptedModel | undefined;

afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function serve(...steps: ScriptStep[]) {
  model = await ScriptedModel.start(steps);
  return { model, client: createOpenAIClient({ apiKey: 'sk-test', baseURL: model.url }) };
}

describe('runBackgroundResponse', () => {
  it('creates the response in background mode, reports its id before waiting, and polls until done', async () => {
    const release = deferred();
    const { model, client } = await serve(reply.held(reply.text('finished'), release.promise));
    const reported: string[] = [];
    const polls: number[] = [];
    const done = runBackgroundResponse(client, params, {
      signal: new AbortController().signal,
      schedule: fast,
      onResponseId: (id) => reported.push(id),
      onPoll: () => polls.push(model.retrievals.length),
    });
    // Raced with the call: should it fail before the server sees the polls, the test fails with its error.
    await Promise.race([done, model.waitUntil(() => model.retrievals.length >= 2)]);
    expect(reported).toEqual(['resp_1']);
    release.resolve();
    const response = await done;
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('finished');
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.body).toMatchObject({ background: true, store: true });
    expect(polls.length).toBeGreaterThanOrEqual(2);
  });

  it('leaves no listener on the turn’s signal however often it polls', async () => {
    const release = deferred();
    const { model, client } = await serve(reply.held(reply.text('finished'), release.promise));
    const signal = new AbortController().signal;
    const done = runBackgroundResponse(client, params, {
      signal,
      schedule: fast,
      onResponseId: () => undefined,
    });
    await Promise.race([done, model.waitUntil(() => model.retrievals.length >= 15)]);
    expect(getEventListeners(signal, 'abort').length).toBeLessThanOrEqual(1);
    release.resolve();
    await done;
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('re-attaches to the response an earlier attempt created instead of creating another', async () => {
    const release = deferred();
    const { model, client } = await serve(reply.held(reply.text('first and only'), release.promise));
    const first = new AbortController();
    const firstAttempt = runBackgroundResponse(client, params, {
      signal: first.signal,
      schedule: fast,
      onResponseId: () => undefined,
    });
    await Promise.race([firstAttempt, model.waitUntil(() => model.retrievals.length > 0)]);
    first.abort(new Error('worker died'));
    // Aborted mid-poll or mid-delay: either way the attempt ends without a result.
    await expect(firstAttempt).rejects.toThrow(/worker died|aborted/);

    const reported: string[] = [];
    const retry = runBackgroundResponse(client, params, {
      signal: new AbortController().signal,
      schedule: fast,
      resumeResponseId: 'resp_1',
      onResponseId: (id) => reported.push(id),
    });
    release.resolve();
    expect((await retry).output_text).toBe('first and only');
    expect(reported).toEqual(['resp_1']);
    expect(model.requests).toHaveLength(1);
  });

  it('creates a new response when the earlier one is unknown to the server', async () => {
    const { model, client } = await serve(reply.text('fresh'));
    const reported: string[] = [];
    const response = await runBackgroundResponse(client, params, {
      signal: new AbortController().signal,
      schedule: fast,
      resumeResponseId: 'resp_expired',
      onResponseId: (id) => reported.push(id),
    });
    expect(response.output_text).toBe('fresh');
    expect(reported).toEqual(['resp_1']);
    expect(model.retrievals[0]).toBe('resp_expired');
  });

  it('creates a new response when the earlier one was cancelled', async () => {
    const { model, client } = await serve(
      reply.held(reply.text('cancelled'), new Promise(() => undefined)),
      reply.text('again'),
    );
    const first = new AbortController();
    const attempt = runBackgroundResponse(client, params, {
      signal: first.signal,
      schedule: fast,
      onResponseId: () => undefined,
    });
    await Promise.race([attempt, model.waitUntil(() => model.retrievals.length > 0)]);
    await client.responses.cancel('resp_1');
    first.abort(new Error('stop'));
    await expect(attempt).rejects.toThrow(/stop|aborted/);
    const response = await runBackgroundResponse(client, params, {
      signal: new AbortController().signal,
      schedule: fast,
      resumeResponseId: 'resp_1',
      onResponseId: () => undefined,
    });
    expect(response.id).toBe('resp_2');
    expect(response.output_text).toBe('again');
  });

  it('fails at once, not retryable, when the server takes background mode but cannot retrieve the response', async () => {
    const release = deferred();
    model = await ScriptedModel.start([reply.held(reply.text('never read'), release.promise)], {
      cannotRetrieve: true,
    });
    const client = createOpenAIClient({ apiKey: 'sk-test', baseURL: model.url });
    const failure = await runBackgroundResponse(client, params, {
      signal: new AbortController().signal,
      schedule: fast,
      onResponseId: () => undefined,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    release.resolve();
    expect(failure).toBeInstanceOf(ModelError);
    expect(failure).toMatchObject({ type: 'ModelError.BackgroundUnsupported', retryable: false });
    expect((failure as ModelError).message).toContain('KEEL_MODEL_MODE=foreground');
    expect((failure as ModelError).message).toContain('HTTP 400');
    expect(model.retrievals).toHaveLength(1);
  });

  it('creates a new response when the server cannot give back the earlier one at all', async () => {
    model = await ScriptedModel.start([reply.text('made again')], { cannotRetrieve: true });
    const client = createOpenAIClient({ apiKey: 'sk-test', baseURL: model.url });
    const failure = await runBackgroundResponse(client, params, {
      signal: new AbortController().signal,
      schedule: fast,
      resumeResponseId: 'resp_from_a_dead_attempt',
      onResponseId: () => undefined,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    // The re-attach was refused, so the turn was created again (not failed as a bad request); this
    // server answers it `queued` and then cannot be polled either, which is the failure that names
    // the setting. (LiteLLM answers a background request finished, so there the new one completes.)
    expect(model.retrievals).toEqual(['resp_from_a_dead_attempt', 'resp_1']);
    expect(model.requests).toHaveLength(1);
    expect(failure).toMatchObject({ type: 'ModelError.BackgroundUnsupported', retryable: false });
  });

  it('stops waiting at once when its signal is aborted', async () => {
    const { model, client } = await serve(reply.held(reply.text('never'), new Promise(() => undefined)));
    const controller = new AbortController();
    const attempt = runBackgroundResponse(client, params, {
      signal: controller.signal,
      schedule: { initialMs: 60_000, maxMs: 60_000 },
      onResponseId: () => controller.abort(new Error('cancelled')),
    });
    await expect(attempt).rejects.toThrow('cancelled');
    expect(model.retrievals).toEqual([]);
  });

  it('gives up on a create the server does not accept in time, as a retryable CreateTimeout', async () => {
    const { model, client } = await serve(reply.hang());
    const reported: string[] = [];
    const attempt = runBackgroundResponse(client, params, {
      signal: new AbortController().signal,
      schedule: fast,
      createTimeoutMs: 200,
      onResponseId: (id) => reported.push(id),
    });
    const error: unknown = await attempt.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({
      type: 'ModelError.CreateTimeout',
      retryable: true,
      message: 'The model server did not accept the background request within 0.2 s',
    });
    expect(reported).toEqual([]);
    expect(model.requests).toHaveLength(1);
  });

  it('waits for a slow create within its bound, and reports the id once it is accepted', async () => {
    const accept = deferred();
    const { model, client } = await serve(reply.slowToAccept(reply.text('accepted late'), accept.promise));
    const reported: string[] = [];
    const attempt = runBackgroundResponse(client, params, {
      signal: new AbortController().signal,
      schedule: fast,
      onResponseId: (id) => reported.push(id),
    });
    // Awaited below; handled now so that a rejection while we wait for the request is not unhandled.
    attempt.catch(() => undefined);
    await model.waitForRequests(1);
    expect(reported).toEqual([]);
    accept.resolve();
    expect((await attempt).output_text).toBe('accepted late');
    expect(reported).toEqual(['resp_1']);
  });
});
