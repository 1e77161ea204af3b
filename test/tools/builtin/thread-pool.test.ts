import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ThreadDeadlineError,
  ThreadFailedError,
  ThreadPool,
} from '../../../src/tools/builtin/thread-pool.js';
import type { ThreadPoolOptions } from '../../../src/tools/builtin/thread-pool.js';

/** A thread script with one behaviour per message kind, hostile ones included. */
const SOURCE = String.raw`'use strict';
const { parentPort, threadId } = require('node:worker_threads');
parentPort.on('message', (message) => {
  if (message.kind === 'echo') parentPort.postMessage({ echo: message.value, threadId });
  else if (message.kind === 'env') parentPort.postMessage({ env: Object.keys(process.env) });
  else if (message.kind === 'spin') for (;;);
  else if (message.kind === 'backtrack') parentPort.postMessage(/^(a+)+$/.test('a'.repeat(40) + '!'));
  else if (message.kind === 'allocate') {
    const kept = [];
    for (;;) kept.push(new Array(100000).fill(kept.length));
  } else if (message.kind === 'crash') throw new Error('boom');
});
`;

const pools: ThreadPool[] = [];

function pool(options: Partial<ThreadPoolOptions> = {}): ThreadPool {
  const created = new ThreadPool({
    source: SOURCE,
    maxThreads: 2,
    idleMs: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
    ...options,
  });
  pools.push(created);
  return created;
}

afterEach(async () => {
  for (const created of pools.splice(0)) await created.close();
});

const job = (signal = new AbortController().signal, deadlineMs = 30_000) => ({ deadlineMs, signal });

interface Echo {
  echo: unknown;
  threadId: number;
}

describe('ThreadPool', () => {
  it('runs jobs on a thread it reuses, and ends idle threads on close', async () => {
    const threads = pool();
    const first = (await threads.run({ kind: 'echo', value: 1 }, job())) as Echo;
    const second = (await threads.run({ kind: 'echo', value: 2 }, job())) as Echo;
    expect(first.echo).toBe(1);
    expect(second).toEqual({ echo: 2, threadId: first.threadId });
    expect(threads.threadCount).toBe(1);
    await threads.close();
    expect(threads.threadCount).toBe(0);
  });

  it('gives the thread none of the environment, which holds the secrets', async () => {
    process.env.KEEL_TEST_SECRET = 'sk-do-not-leak';
    try {
      expect(await pool().run({ kind: 'env' }, job())).toEqual({ env: [] });
    } finally {
      delete process.env.KEEL_TEST_SECRET;
    }
  });

  it('terminates a thread past its deadline while the event loop keeps turning', async () => {
    const threads = pool({ maxThreads: 1 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    try {
      await expect(threads.run({ kind: 'backtrack' }, job(undefined, 300))).rejects.toThrow(
        ThreadDeadlineError,
      );
    } finally {
      clearInterval(ticker);
    }
    // The main thread ran its timers during the backtracking: it was never blocked.
    expect(ticks).toBeGreaterThan(3);
    // The only thread slot is free again: the next job gets a fresh thread.
    expect(await threads.run({ kind: 'echo', value: 'after' }, job())).toMatchObject({ echo: 'after' });
  });

  it('stops a running job at once when aborted, with the reason', async () => {
    const threads = pool();
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const running = threads.run({ kind: 'spin' }, job(controller.signal));
    setTimeout(() => controller.abort(reason), 100);
    await expect(running).rejects.toBe(reason);
    await expect(threads.run({ kind: 'echo', value: 'next' }, job())).resolves.toMatchObject({
      echo: 'next',
    });
  });

  it('fails a job whose thread runs out of its heap, and only that job', async () => {
    const threads = pool();
    const rssBefore = process.memoryUsage.rss();
    const failure: unknown = await threads.run({ kind: 'allocate' }, job()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ThreadFailedError);
    expect(failure).toMatchObject({ code: 'ERR_WORKER_OUT_OF_MEMORY' });
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(200 * 2 ** 20);
    expect(await threads.run({ kind: 'echo', value: 'alive' }, job())).toMatchObject({ echo: 'alive' });
  });

  it('fails a job whose thread throws, and replaces the thread', async () => {
    const threads = pool({ maxThreads: 1 });
    await expect(threads.run({ kind: 'crash' }, job())).rejects.toThrow(/boom/);
    expect(await threads.run({ kind: 'echo', value: 'again' }, job())).toMatchObject({ echo: 'again' });
  });

  it('fails a job whose message cannot be cloned, keeping its thread slot', async () => {
    const threads = pool({ maxThreads: 1 });
    await expect(threads.run({ kind: 'echo', value: () => 1 }, job())).rejects.toThrow(/could not be cloned/);
    expect(await threads.run({ kind: 'echo', value: 'fine' }, job())).toMatchObject({ echo: 'fine' });
  });

  it('queues jobs beyond maxThreads; a queued job that is aborted never runs', async () => {
    const threads = pool({ maxThreads: 1 });
    const controller = new AbortController();
    const first = threads.run({ kind: 'echo', value: 'first' }, job());
    const queued = threads.run({ kind: 'spin' }, job(controller.signal));
    const third = threads.run({ kind: 'echo', value: 'third' }, job());
    controller.abort(new Error('not wanted'));
    const [a, b, c] = await Promise.allSettled([first, queued, third]);
    expect(b).toMatchObject({ status: 'rejected', reason: new Error('not wanted') });
    expect(a).toMatchObject({ status: 'fulfilled', value: { echo: 'first' } });
    expect(c).toMatchObject({ status: 'fulfilled', value: { echo: 'third' } });
    // The spinning job never ran: the one thread served both others.
    const ids = [a, c].map((result) => (result.status === 'fulfilled' ? (result.value as Echo).threadId : 0));
    expect(ids[0]).toBe(ids[1]);
    expect(threads.threadCount).toBe(1);
  });

  it('ends a thread that stays idle', async () => {
    const threads = pool({ idleMs: 50 });
    await threads.run({ kind: 'echo', value: 1 }, job());
    await vi.waitFor(() => expect(threads.threadCount).toBe(0), { timeout: 5_000 });
  });
});
