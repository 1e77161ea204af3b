import path from 'node:path';
import { RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, it } from 'vitest';
import rule from '../../eslint-rules/no-unawaited-promise-variable.js';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

// The rule needs types: each case is linted as test/fixtures/eslint-rules/file.ts of a small project whose
// api.ts declares what the cases call.
const fixtures = path.join(import.meta.dirname, '../fixtures/eslint-rules');
const tester = new RuleTester({
  languageOptions: {
    parser: tseslint.parser,
    // With CI=true typescript-eslint infers a one-shot lint and builds its program once from the tsconfig;
    // the type checker then throws on RuleTester's in-memory cases (TypeError in getLocalModuleSpecifier).
    // `npm run lint` is unaffected; the rule under test is the same either way.
    parserOptions: {
      project: './tsconfig.json',
      tsconfigRootDir: fixtures,
      disallowAutomaticSingleRunInference: true,
    },
  },
});

const imports =
  "import { count, emitter, expect, f, fixture, g, items, refusal, started, stream, use, worker, ws } from './api.js';\n";
/** A case as a file: the imports on line 1, then `code` from line 2. */
const file = (code: string) => ({ code: imports + code, filename: path.join(fixtures, 'file.ts') });
const tooLate = (name: string, line: number, what = 'a promise') => ({
  messageId: 'handledTooLate',
  data: { name, line: String(line), what },
});

describe('no-unawaited-promise-variable', () => {
  tester.run('no-unawaited-promise-variable', rule, {
    valid: [
      // Each promise awaited before the next await.
      file('async function run() { const a = f(); await a; const b = g(); await b; }'),
      file('async function run() { const a = f(); const b = g(); await Promise.all([a, b]); }'),
      file('async function run() { const [a, b] = await Promise.all([f(), g()]); use([a, b]); }'),
      file('async function run() { const a = f(); const b = g(); await Promise.allSettled([a, b]); }'),
      // A handler attached before the function suspends, on the variable or where it is made.
      file('async function run() { const a = f(); a.catch(() => undefined); await g(); await a; }'),
      file('async function run() { const a = f().catch(() => undefined); await g(); await a; }'),
      file('async function run() { const a = f(); a.then(use, () => undefined); await g(); }'),
      file('async function run() { const a = f(); await expect(a).rejects.toThrow(); }'),
      file('async function run() { const a = f(); use(a); await g(); }'),
      // Waiting for something else while failing fast if the pending promise rejects first.
      file('async function run() { const done = f(); await Promise.race([done, g()]); use(await done); }'),
      file('async function run() { const a = f(); return a; }'),
      file('async function run() { const a = f(); if (count() > 1) return await a; return a; }'),
      file('const run = async () => { const a = f(); const b = g(); return Promise.all([a, b]); };'),
      // An executor without `reject` can only throw synchronously, which the creating code sees.
      file(
        "async function run() { const closed = new Promise<void>((resolve) => emitter.once('close', resolve)); await g(); await closed; }",
      ),
      // An await inside a nested function does not suspend this one.
      file(
        'async function run() { const a = f(); const later = async () => { await g(); }; use(later); await a; }',
      ),
      file('async function run() { const ps = items.map(() => f()); await Promise.all(ps); }'),
      file('async function run() { const n = count(); await g(); use(n); }'),
      file('async function run() { await g(); const a = f(); await a; }'),
      file('function run() { const a = f(); return [a]; }'),
      // Handed straight to a function, or handled where it is stored.
      file('async function run() { use({ done: f() }); await g(); }'),
      file('function run(list: Promise<string>[]) { list.push(f().catch(() => undefined)); }'),
      // The fixed shapes of the patterns the rule was written for (see invalid).
      file(
        "async function run() { for (const attempt of [() => ws.readFile('zero'), () => ws.writeFile('zero', new Uint8Array(1))]) use((await refusal(attempt())).message); }",
      ),
      file('async function run() { await worker.runUntil(async () => { await f(); }); }'),
      file(
        'async function run() { const pending = f(); pending.catch(() => undefined); await started.promise; await expect(pending).rejects.toBe(1); }',
      ),
      file(
        'function watch(replacements: Promise<unknown>[]) { const replacement = fixture.startWorker(); replacement.catch(() => undefined); replacements.push(replacement); }',
      ),
      file('for (const attempt of [f()]) use(attempt);'),
    ],
    invalid: [
      // test/tools/workspace.test.ts: both attempts exist before the loop awaits the first.
      {
        ...file(`async function run() {
  for (const attempt of [ws.readFile('zero'), ws.writeFile('zero', new Uint8Array(1))]) {
    use((await refusal(attempt)).message);
  }
}`),
        errors: [{ messageId: 'createdTogether', line: 3 }],
      },
      {
        ...file('async function run() { for await (const value of [f(), g()]) use(value); }'),
        errors: [{ messageId: 'createdTogether' }],
      },
      // The durability tests and src/cli/run-command.ts: a worker's run() awaited only after the work.
      {
        ...file(`async function run() {
  const running = worker.run();
  try {
    await f();
  } finally {
    worker.shutdown();
    await running;
  }
}`),
        errors: [tooLate('running', 5)],
      },
      {
        ...file('function host() { return { worker, running: worker.run() }; }'),
        errors: [{ messageId: 'storedAway', data: { where: 'an object' } }],
      },
      // The background, executor, http-fetch and rate-limit tests: the call waits while the test awaits a step.
      {
        ...file(`async function run() {
  const pending = f();
  await started.promise;
  await expect(pending).rejects.toBe(1);
}`),
        errors: [tooLate('pending', 4)],
      },
      {
        ...file('async function run() { const done = f(); await g(); use(await done); }'),
        errors: [tooLate('done', 2)],
      },
      // The soak test: replacement workers started in an event handler and awaited at the end.
      {
        ...file(
          'function watch(replacements: Promise<unknown>[]) { replacements.push(fixture.startWorker().then((replacement) => replacement)); }',
        ),
        errors: [{ messageId: 'storedAway', data: { where: 'a collection' } }],
      },
      // bench/per-step.ts: awaited only by a function that runs later.
      {
        ...file(
          'async function variant() { const running = worker.run(); return { async stop() { worker.shutdown(); await running; } }; }',
        ),
        errors: [{ messageId: 'handledOnlyLater', data: { name: 'running', what: 'a promise' } }],
      },
      // The second of two is awaited while the first runs: if it rejects meanwhile, nobody listens.
      {
        ...file('async function run() { const a = f(); const b = g(); await a; await b; }'),
        errors: [tooLate('b', 2)],
      },
      {
        ...file('async function run() { const a = f(); await g(); }'),
        errors: [tooLate('a', 2)],
      },
      // `.finally` and `.then` without onRejected make promises that reject in turn; `void` handles nothing.
      {
        ...file(
          'async function run() { const a = f(); void a.finally(() => undefined); await g(); await a; }',
        ),
        errors: [tooLate('a', 2)],
      },
      {
        ...file('async function run() { const a = f(); void a.then(use); await g(); }'),
        errors: [tooLate('a', 2)],
      },
      {
        ...file('async function run() { const a = f(); const b = a.then(use); await g(); await b; }'),
        errors: [tooLate('b', 2)],
      },
      {
        ...file('async function run() { const a = f(); void a; await g(); await a; }'),
        errors: [tooLate('a', 2)],
      },
      // Other ways of suspending: for await, yield, and an assignment instead of a declaration.
      {
        ...file(
          'async function run() { const a = f(); for await (const value of stream()) use(value); await a; }',
        ),
        errors: [tooLate('a', 2)],
      },
      {
        ...file('async function* run() { const a = f(); yield 1; await a; }'),
        errors: [tooLate('a', 2)],
      },
      {
        ...file('async function run() { let a: Promise<string>; a = f(); await g(); await a; }'),
        errors: [tooLate('a', 2)],
      },
      {
        ...file(
          'async function run() { const attempts = [f(), g()]; for (const attempt of attempts) await attempt; }',
        ),
        errors: [tooLate('attempts', 2, 'promises')],
      },
      {
        ...file(
          'async function run() { const ps = items.map(() => f()); await g(); await Promise.all(ps); }',
        ),
        errors: [tooLate('ps', 2, 'promises')],
      },
      // At module level too (top-level await).
      {
        ...file('const a = f();\nawait g();\nawait a;'),
        errors: [tooLate('a', 3)],
      },
    ],
  });
});
