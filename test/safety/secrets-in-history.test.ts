import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunResult } from '../../src/contract/run-result.js';
import type { RunState } from '../../src/contract/run-state.js';
import { secretForms } from '../../src/safety/secret-forms.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { connectTestServer, RecordingLogger, TEST_API_KEY } from '../support/harness.js';
import type { TestServer } from '../support/harness.js';
import { historyJson, historyText } from '../support/history.js';
import { reply } from '../support/scripted-model.js';
import type { RecordedRequest } from '../support/scripted-model.js';
import { withScenario } from '../support/scenario.js';
import { echoTool } from '../support/test-tools.js';

/**
 * The worker's secrets, each with a fragment of letters and digits that appears nowhere else: a
 * fragment survives every escaping, so its absence from text means no form of the secret is there.
 */
const ENVIRONMENT = {
  API_KEY2: { value: 'k2"q\\w-7hq2vx9e', fragment: '7hq2vx9e' },
  SECRETS_X: { value: 'sx-qp83mz1r', fragment: 'qp83mz1r' },
  DB_PASSWORDS: { value: 'hunt3r', fragment: 'hunt3r' },
  OPENAI_APIKEY_PROD: { value: 'sk-prod-w8e7r6t5y4', fragment: 'w8e7r6t5' },
  AUTHORIZATION: { value: 'Bearer az-0n9m8l7k', fragment: '0n9m8l7k' },
  DATABASE_URL: { value: 'postgres://app:pg-pw-5v4c3x@db/app', fragment: '5v4c3x' },
};
/** The model key reaches the worker through the `openai` client only, not its environment. */
const KEY = { value: TEST_API_KEY, fragment: TEST_API_KEY.slice(8, 16) };
const SECRETS = [KEY, ...Object.values(ENVIRONMENT)];
const value = (name: keyof typeof ENVIRONMENT): string => ENVIRONMENT[name].value;
const keyInBase64 = Buffer.from(`key=${KEY.value}`).toString('base64');

/** A hostile tool: it reads the worker's secrets and returns them as JSON (so `"` and `\` come escaped). */
const leakEnvironment = defineTool({
  name: 'leak_environment',
  description: 'Return the environment.',
  schema: z.object({}),
  readOnly: true,
  execute: () => ({
    key: KEY.value,
    env: Object.fromEntries(Object.keys(ENVIRONMENT).map((name) => [name, process.env[name]])),
  }),
});

/** A tool that fails with the database URL, password and all, in its error: that error reaches the log. */
const crash = defineTool({
  name: 'crash',
  description: 'Fail.',
  schema: z.object({}),
  readOnly: true,
  execute: () => {
    throw new Error(`cannot connect to ${value('DATABASE_URL')} as ${value('DB_PASSWORDS')}`);
  },
});

let server: TestServer;
const saved = new Map<string, string | undefined>();
beforeAll(async () => {
  server = await connectTestServer();
  for (const [name, { value: secret }] of Object.entries(ENVIRONMENT)) {
    saved.set(name, process.env[name]);
    process.env[name] = secret;
  }
});
afterAll(async () => {
  for (const [name, previous] of saved) {
    if (previous === undefined) delete process.env[name];
    else process.env[name] = previous;
  }
  await server?.close();
});

/** Everything a run leaves behind that someone other than the worker can read. */
interface Trail {
  result: RunResult;
  state: RunState;
  history: string;
  rawHistory: string;
  requests: RecordedRequest[];
  log: string;
}

async function hostileRun(conversation: 'chained' | 'stateless'): Promise<Trail> {
  const logger = new RecordingLogger();
  const echoed = `${KEY.value} ${value('DB_PASSWORDS')} ${value('API_KEY2')}`;
  const script = [
    reply.calls({ name: 'leak_environment', arguments: {} }, { name: 'crash', arguments: {} }),
    // The model has the secrets from somewhere (a tool output it decoded, say) and echoes them everywhere.
    reply.items([
      { reasoning: `the key is ${KEY.value}, the password ${value('DB_PASSWORDS')}` },
      { text: `Found ${SECRETS.map((secret) => secret.value).join(', ')}; encoded ${keyInBase64}` },
      { call: { name: 'echo', arguments: { text: echoed } } },
    ]),
    reply.text(`final ${KEY.value} / ${value('SECRETS_X')} / ${keyInBase64}`),
  ];
  return withScenario(
    server,
    script,
    { tools: [leakEnvironment, crash, echoTool], logger },
    async ({ keel, model }) => {
      const runId = await keel.startRun({
        task: 'find the keys',
        ...(conversation === 'stateless' ? { conversation: 'stateless' as const } : {}),
      });
      const result = await keel.waitForResult(runId);
      return {
        result,
        state: await keel.getRunState(runId),
        history: await historyText(server.client, runId),
        rawHistory: await historyJson(server.client, runId),
        requests: model.requests,
        log: JSON.stringify(
          logger.entries.map(({ message, meta }) => ({
            message,
            meta,
            error: meta?.error instanceof Error ? [meta.error.message, meta.error.stack] : undefined,
          })),
        ),
      };
    },
  );
}

describe.each(['chained', 'stateless'] as const)('a hostile run (%s conversation)', (conversation) => {
  let trail: Trail;
  beforeAll(async () => {
    trail = await hostileRun(conversation);
  });

  it('completes, with the secrets in its answer redacted', () => {
    // Only the base64 characters the key alone determines are redacted; `key=` stays as `a2V5PX`.
    expect(trail.result).toMatchObject({
      status: 'completed',
      finalText: 'final [redacted] / [redacted] / a2V5PX[redacted]g==',
    });
  });

  it('keeps every form of every secret out of the history, the result and the state query', () => {
    // The decoded history holds the tool outputs and the model's echo, so the absences mean something.
    expect(trail.history).toContain('echo: [redacted] [redacted] [redacted]');
    expect(trail.history).toMatch(/API_KEY2[\\"]+:[\\"]+\[redacted\]/);
    // A stateless run keeps the model's output items, reasoning summaries included, to send them back.
    if (conversation === 'stateless')
      expect(trail.history).toContain('the key is [redacted], the password [redacted]');
    const texts = {
      history: trail.history,
      result: JSON.stringify(trail.result),
      state: JSON.stringify(trail.state),
    };
    for (const [where, text] of Object.entries(texts)) {
      for (const secret of SECRETS)
        expect(text, `${where}: ${secret.fragment}`).not.toContain(secret.fragment);
      expect(text, where).not.toContain(keyInBase64);
    }
    // Payloads are base64 in the history as fetched: no alignment of any secret's encoding is there.
    for (const secret of SECRETS) {
      for (const form of secretForms(secret.value)) expect(trail.rawHistory).not.toContain(form.text);
    }
  });

  it('shows the model no secret in the observations it sends back', () => {
    const sent = JSON.stringify(trail.requests.map((request) => request.body));
    expect(sent).toContain('[redacted]');
    for (const secret of SECRETS) expect(sent, secret.fragment).not.toContain(secret.fragment);
  });

  it('logs the failed tool in full but without its secrets', () => {
    expect(trail.log).toContain('Tool crash failed');
    expect(trail.log).toContain('cannot connect to postgres://app:[redacted]@db/app as [redacted]');
    for (const secret of SECRETS) expect(trail.log, secret.fragment).not.toContain(secret.fragment);
  });
});
