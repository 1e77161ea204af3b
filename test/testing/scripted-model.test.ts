import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { reply, ScriptedModel } from '../../src/testing/index.js';

let current: ScriptedModel | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

/** A held step whose hold the test rejects, served through the real SDK (no retries: one request). */
async function heldThenRejected() {
  let reject!: (error: Error) => void;
  const hold = new Promise<never>((_, rejectHold) => (reject = rejectHold));
  const model = await ScriptedModel.start([reply.held(reply.text('never sent'), hold)]);
  current = model;
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: model.url, maxRetries: 0 });
  return { model, client, reject };
}

describe('ScriptedModel', () => {
  it('answers a foreground request whose hold rejects with a 500 and reports it, instead of leaving it unhandled', async () => {
    const { model, client, reject } = await heldThenRejected();
    const request = client.responses.create({ model: 'scripted', input: 'hello' });
    request.catch(() => undefined);
    await model.waitForRequests(1);
    reject(new Error('the test gave up'));
    await expect(request).rejects.toMatchObject({ status: 500 });
    expect(() => model.assertDone()).toThrow('a request failed: the test gave up');
  });

  it('reports a background response whose hold rejects, instead of leaving it unhandled', async () => {
    const { model, client, reject } = await heldThenRejected();
    const queued = await client.responses.create({ model: 'scripted', input: 'hello', background: true });
    expect(queued.status).toBe('queued');
    reject(new Error('the test gave up'));
    await model.waitUntil(() => model.problems.length > 0);
    expect(() => model.assertDone()).toThrow('the hold of request 0 rejected: the test gave up');
  });
});

describe('ScriptedModel, streaming', () => {
  it('holds back a held reply of calls alone, with no text to pause before, until its hold settles', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const model = await ScriptedModel.start([
      reply.held(reply.calls({ name: 'echo', arguments: { text: 'late' } }), hold),
    ]);
    current = model;
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: model.url, maxRetries: 0 });
    const stream = await client.responses.create({ model: 'scripted', input: 'hello', stream: true });
    const events = stream[Symbol.asyncIterator]();
    expect((await events.next()).value).toMatchObject({ type: 'response.created' });
    const next = events.next();
    // A bounded look that gives a broken hold the chance to show: the call must not come early.
    const early = await Promise.race([
      next.then(() => 'an event came'),
      new Promise<string>((resolve) => setTimeout(() => resolve('nothing yet'), 500)),
    ]);
    expect(early).toBe('nothing yet');
    release();
    expect((await next).value).toMatchObject({
      type: 'response.output_item.added',
      item: { type: 'function_call', name: 'echo' },
    });
    const rest: string[] = [];
    for await (const event of { [Symbol.asyncIterator]: () => events }) rest.push(event.type);
    expect(rest.at(-1)).toBe('response.completed');
  });
});
