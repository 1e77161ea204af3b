import { homedir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, workerConfigFromEnvironment } from '../src/config.js';

/** The ConfigError `run` throws; fails the test when it throws nothing or something else. */
function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
}

const withKey = { OPENAI_API_KEY: 'sk-test-key' };

describe('workerConfigFromEnvironment', () => {
  it('refuses to start without OPENAI_API_KEY or OPENAI_BASE_URL, naming both', () => {
    const error = configError(() => workerConfigFromEnvironment({}));

    expect(error.name).toBe('ConfigError');
    expect(error.message).toContain('OPENAI_API_KEY');
    expect(error.message).toContain('OPENAI_BASE_URL');
  });

  it('treats empty OPENAI_API_KEY and OPENAI_BASE_URL as missing', () => {
    const error = configError(() =>
      workerConfigFromEnvironment({ OPENAI_API_KEY: '', OPENAI_BASE_URL: ' ' }),
    );

    expect(error.message).toContain('OPENAI_API_KEY');
  });

  it('starts with only OPENAI_BASE_URL, for servers that need no key', () => {
    const config = workerConfigFromEnvironment({ OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1' });

    expect(config.model.baseURL).toBe('http://127.0.0.1:8080/v1');
    expect(config.model.apiKey).toBeUndefined();
  });

  it('uses the defaults: task queue keel, the current directory, 10 seconds of grace', () => {
    const config = workerConfigFromEnvironment(withKey);

    expect(config).toEqual({
      taskQueue: 'keel',
      workspace: process.cwd(),
      stateDirectory: path.join(homedir(), '.local', 'state', 'keel'),
      workspaceProtect: ['.git', '.keel'],
      shutdownGraceSeconds: 10,
      heartbeatIntervalSeconds: 2,
      stream: {},
      tools: undefined,
      limits: {},
      budgets: {},
      maxOutputTokens: 32_768,
      prices: undefined,
      conversation: 'chained',
      modelPacing: {},
      runCommand: undefined,
      httpFetch: undefined,
      model: { apiKey: 'sk-test-key', baseURL: undefined, defaultModel: 'gpt-5-mini', mode: 'background' },
      telemetry: { tracing: undefined, captureContent: false, prometheusBindAddress: undefined },
    });
  });

  it('caps a turn at 32768 output tokens unless KEEL_MAX_OUTPUT_TOKENS says another number or none', () => {
    const cap = (value: string) =>
      workerConfigFromEnvironment({ ...withKey, KEEL_MAX_OUTPUT_TOKENS: value }).maxOutputTokens;
    expect(cap('')).toBe(32_768);
    expect(cap('4000')).toBe(4000);
    expect(cap('none')).toBeNull();
    expect(cap('NONE')).toBeNull();
    for (const bad of ['8', '1.5', 'lots', '-1'])
      expect(() => cap(bad)).toThrow(
        `KEEL_MAX_OUTPUT_TOKENS must be a whole number of at least 16 (output tokens a turn may spend) or none, not "${bad}"`,
      );
  });

  it('keeps conversations chained on the OpenAI API and Azure, stateless on other servers, unless KEEL_CONVERSATION says', () => {
    const conversation = (environment: NodeJS.ProcessEnv) =>
      workerConfigFromEnvironment({ ...withKey, ...environment }).conversation;
    expect(conversation({})).toBe('chained');
    expect(conversation({ OPENAI_BASE_URL: 'https://api.openai.com/v1' })).toBe('chained');
    expect(conversation({ OPENAI_BASE_URL: 'https://team.openai.azure.com/openai/v1' })).toBe('chained');
    expect(conversation({ OPENAI_BASE_URL: 'http://127.0.0.1:4000/v1' })).toBe('stateless');
    expect(conversation({ OPENAI_BASE_URL: 'http://ollama:11434/v1' })).toBe('stateless');
    expect(conversation({ OPENAI_BASE_URL: 'http://127.0.0.1:4000/v1', KEEL_CONVERSATION: 'chained' })).toBe(
      'chained',
    );
    expect(conversation({ KEEL_CONVERSATION: 'stateless' })).toBe('stateless');
    expect(conversation({ OPENAI_BASE_URL: 'http://127.0.0.1:4000/v1', KEEL_CONVERSATION: 'auto' })).toBe(
      'stateless',
    );
    expect(() => conversation({ KEEL_CONVERSATION: 'store' })).toThrow(/KEEL_CONVERSATION must be/u);
  });

  it('reads KEEL_HEARTBEAT_INTERVAL_SECONDS and refuses a malformed one', () => {
    expect(
      workerConfigFromEnvironment({ ...withKey, KEEL_HEARTBEAT_INTERVAL_SECONDS: '0.5' })
        .heartbeatIntervalSeconds,
    ).toBe(0.5);
    expect(() => workerConfigFromEnvironment({ ...withKey, KEEL_HEARTBEAT_INTERVAL_SECONDS: '0' })).toThrow(
      new ConfigError('KEEL_HEARTBEAT_INTERVAL_SECONDS must be a number of seconds, not "0"'),
    );
  });

  it('reads run limits and enabled tools, bounded exactly as a run input is', () => {
    const config = workerConfigFromEnvironment({
      ...withKey,
      KEEL_MAX_TURNS: '50',
      KEEL_OBSERVATION_CHAR_LIMIT: ' 20000 ',
      KEEL_MODEL_TIMEOUT_SECONDS: '120',
      KEEL_HEARTBEAT_TIMEOUT_SECONDS: '3',
      KEEL_TOOLS: 'read_file, list_directory',
    });
    expect(config.limits).toEqual({
      maxTurns: 50,
      observationCharLimit: 20_000,
      modelTimeoutSeconds: 120,
      heartbeatTimeoutSeconds: 3,
    });
    expect(config.tools).toEqual(['read_file', 'list_directory']);
  });

  it.each([
    ['KEEL_MAX_TURNS', '0', 'KEEL_MAX_TURNS must be a whole number from 1 to 1000000, not "0"'],
    ['KEEL_MAX_TURNS', 'many', 'KEEL_MAX_TURNS must be a whole number from 1 to 1000000, not "many"'],
    ['KEEL_MAX_TOTAL_TOKENS', '0', 'KEEL_MAX_TOTAL_TOKENS must be a whole number of at least 1, not "0"'],
    ['KEEL_MAX_COST_USD', '-2', 'KEEL_MAX_COST_USD must be a number above 0, not "-2"'],
    [
      'KEEL_MODEL_PRICES',
      '{"gpt-5":{"input":1}}',
      'KEEL_MODEL_PRICES must be JSON like {"gpt-5":{"input":1.25,"cachedInput":0.125,"output":10}} (US dollars per million tokens), not "{\\"gpt-5\\":{\\"input\\":1}}"',
    ],
    ['KEEL_MODEL_CONCURRENCY', '0', 'KEEL_MODEL_CONCURRENCY must be a whole number of at least 1, not "0"'],
    [
      'KEEL_MODEL_TIMEOUT_SECONDS',
      '7200',
      'KEEL_MODEL_TIMEOUT_SECONDS must be a number from 1 to 3600, not "7200"',
    ],
    ['KEEL_TOOLS', 'read file', 'KEEL_TOOLS must be a comma-separated list of names, not "read file"'],
    [
      'OPENAI_BASE_URL',
      'localhost:8080',
      'OPENAI_BASE_URL must be an http:// or https:// URL, not "localhost:8080"',
    ],
  ])('refuses %s=%s, naming the variable', (name, value, message) => {
    expect(() => workerConfigFromEnvironment({ ...withKey, [name]: value })).toThrow(
      new ConfigError(message),
    );
  });

  it('reads budgets, model prices and model pacing', () => {
    expect(workerConfigFromEnvironment(withKey)).toMatchObject({
      budgets: {},
      prices: undefined,
      modelPacing: {},
    });
    const config = workerConfigFromEnvironment({
      ...withKey,
      KEEL_MAX_TOTAL_TOKENS: '500000',
      KEEL_MAX_DURATION_SECONDS: '3600',
      KEEL_MAX_COST_USD: '2.5',
      KEEL_MODEL_PRICES: '{"gpt-5-mini":{"input":0.25,"cachedInput":0.025,"output":2}}',
      KEEL_MODEL_CONCURRENCY: '4',
      KEEL_MODEL_TOKENS_PER_MINUTE: '200000',
    });
    expect(config.budgets).toEqual({ maxTotalTokens: 500_000, maxDurationSeconds: 3600, maxCostUsd: 2.5 });
    expect(config.prices).toEqual({ 'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 } });
    expect(config.modelPacing).toEqual({ maxConcurrent: 4, tokensPerMinute: 200_000 });
  });

  it('enables run_command and http_fetch only when given allow-lists, with their options', () => {
    expect(workerConfigFromEnvironment(withKey)).toMatchObject({
      runCommand: undefined,
      httpFetch: undefined,
    });
    const config = workerConfigFromEnvironment({
      ...withKey,
      KEEL_RUN_COMMAND_ALLOW: 'git, ls,/usr/bin/env',
      KEEL_RUN_COMMAND_TIMEOUT_SECONDS: '300',
      KEEL_RUN_COMMAND_ENV: '{"GIT_AUTHOR_NAME":"Keel"}',
      KEEL_HTTP_ALLOW_HOSTS: 'docs.example.com,*.github.com',
      KEEL_HTTP_ALLOW_POST: 'true',
      KEEL_HTTP_MAX_REDIRECTS: '2',
    });
    expect(config.runCommand).toEqual({
      allow: ['git', 'ls', '/usr/bin/env'],
      timeoutSeconds: 300,
      environment: { GIT_AUTHOR_NAME: 'Keel' },
    });
    expect(config.httpFetch).toEqual({
      allowHosts: ['docs.example.com', '*.github.com'],
      allowPrivateAddresses: false,
      allowPost: true,
      maxRedirects: 2,
    });
  });

  it.each([
    ['KEEL_RUN_COMMAND_ENV', '{"A": 1}', 'KEEL_RUN_COMMAND_ENV must be a JSON object of strings'],
    ['KEEL_RUN_COMMAND_ENV', 'GIT=1', 'KEEL_RUN_COMMAND_ENV must be a JSON object of strings'],
    ['KEEL_HTTP_ALLOW_PRIVATE', 'maybe', 'KEEL_HTTP_ALLOW_PRIVATE must be "true" or "false", not "maybe"'],
    [
      'KEEL_HTTP_MAX_REDIRECTS',
      '1.5',
      'KEEL_HTTP_MAX_REDIRECTS must be a whole number of at least 0, not "1.5"',
    ],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => workerConfigFromEnvironment({ ...withKey, [name]: value })).toThrow(message);
  });

  it('reads KEEL_WORKSPACE_PROTECT: patterns replace the defaults, "none" protects nothing', () => {
    const protect = (value: string): string[] =>
      workerConfigFromEnvironment({ ...withKey, KEEL_WORKSPACE_PROTECT: value }).workspaceProtect;
    expect(protect(' .keel , secrets/** ,*.pem ')).toEqual(['.keel', 'secrets/**', '*.pem']);
    expect(protect('none')).toEqual([]);
    expect(protect('NONE')).toEqual([]);
    expect(protect('  ')).toEqual(['.git', '.keel']);
  });

  it.each([
    ['../state', '"../state" has an empty, "." or ".." part'],
    ['.git,a//b', '"a//b" has an empty, "." or ".." part'],
    ['C:/keel', 'is not relative to the workspace root'],
    ['src\\secrets', 'separate path parts with "/"'],
    ['none,.keel', '"none" cannot be combined with patterns'],
  ])('refuses KEEL_WORKSPACE_PROTECT=%j, naming the variable', (value, problem) => {
    const error = configError(() =>
      workerConfigFromEnvironment({ ...withKey, KEEL_WORKSPACE_PROTECT: value }),
    );
    expect(error.message).toMatch(/^KEEL_WORKSPACE_PROTECT must be "none" or a comma-separated list/);
    expect(error.message).toContain(problem);
  });

  it('keeps side effects in KEEL_STATE_DIR, or in the PostgreSQL database KEEL_IDEMPOTENCY_STORE names', () => {
    expect(workerConfigFromEnvironment(withKey).idempotencyStore).toBeUndefined();
    expect(
      workerConfigFromEnvironment({ ...withKey, KEEL_IDEMPOTENCY_STORE: ' postgres://keel:pw@db:5432/keel ' })
        .idempotencyStore,
    ).toEqual({ url: 'postgres://keel:pw@db:5432/keel' });
    expect(
      workerConfigFromEnvironment({
        ...withKey,
        KEEL_IDEMPOTENCY_STORE: 'postgresql://db/keel',
        KEEL_IDEMPOTENCY_SCHEMA: 'side_effects',
        KEEL_IDEMPOTENCY_TTL_HOURS: '48',
      }).idempotencyStore,
    ).toEqual({ url: 'postgresql://db/keel', schema: 'side_effects', ttlMs: 48 * 3_600_000 });
  });

  it.each([
    ['mysql://keel:hunter2@db/keel', 'its value starts with "mysql:"'],
    ['keel:hunter2@db/keel', 'its value starts with "keel:"'],
    ['postgres://keel:hunter2@db:port/keel', 'its value is not a URL'],
    ['postgresql:/db?password=hunter2', 'its value has no host'],
    ['pg://db/keel?password=hunter2', 'its value starts with "pg:"'],
  ])('refuses KEEL_IDEMPOTENCY_STORE=%j without showing its password', (value, why) => {
    const error = configError(() =>
      workerConfigFromEnvironment({ ...withKey, KEEL_IDEMPOTENCY_STORE: value }),
    );
    expect(error.message).toMatch(
      /^KEEL_IDEMPOTENCY_STORE must be a postgres:\/\/user:password@host:port\/database URL; /u,
    );
    expect(error.message).toContain(why);
    expect(error.message).not.toContain('hunter2');
  });

  it.each([
    [{ KEEL_IDEMPOTENCY_TTL_HOURS: '0' }, /^KEEL_IDEMPOTENCY_TTL_HOURS must be a whole number of at least 1/],
    [{ KEEL_IDEMPOTENCY_SCHEMA: 'a"b' }, /^KEEL_IDEMPOTENCY_SCHEMA must be a schema name/],
  ])('refuses a bad store setting %j, naming it', (settings, message) => {
    const error = configError(() =>
      workerConfigFromEnvironment({ ...withKey, KEEL_IDEMPOTENCY_STORE: 'postgres://db/keel', ...settings }),
    );
    expect(error.message).toMatch(message);
  });

  it('refuses a store schema or expiry without a store to apply them to', () => {
    const error = configError(() =>
      workerConfigFromEnvironment({ ...withKey, KEEL_IDEMPOTENCY_TTL_HOURS: '24' }),
    );
    expect(error.message).toMatch(/apply to a PostgreSQL store: set KEEL_IDEMPOTENCY_STORE/u);
  });

  it('keeps its state under XDG_STATE_HOME, or in KEEL_STATE_DIR when set', () => {
    expect(workerConfigFromEnvironment({ ...withKey, XDG_STATE_HOME: '/var/state' }).stateDirectory).toBe(
      '/var/state/keel',
    );
    expect(
      workerConfigFromEnvironment({ ...withKey, XDG_STATE_HOME: '/var/state', KEEL_STATE_DIR: ' /srv/keel ' })
        .stateDirectory,
    ).toBe('/srv/keel');
  });

  it('reads the task queue, workspace, grace period and model, trimmed', () => {
    const config = workerConfigFromEnvironment({
      ...withKey,
      KEEL_TASK_QUEUE: ' agents ',
      KEEL_WORKSPACE: '/srv/workspace ',
      KEEL_SHUTDOWN_GRACE_SECONDS: '30',
      KEEL_MODEL: 'gpt-custom',
    });

    expect(config.taskQueue).toBe('agents');
    expect(config.workspace).toBe('/srv/workspace');
    expect(config.shutdownGraceSeconds).toBe(30);
    expect(config.model.defaultModel).toBe('gpt-custom');
  });

  it('falls back to the defaults for an empty task queue and workspace', () => {
    const config = workerConfigFromEnvironment({ ...withKey, KEEL_TASK_QUEUE: '', KEEL_WORKSPACE: '  ' });

    expect(config.taskQueue).toBe('keel');
    expect(config.workspace).toBe(process.cwd());
  });

  it('accepts zero seconds of grace when asked for explicitly', () => {
    expect(
      workerConfigFromEnvironment({ ...withKey, KEEL_SHUTDOWN_GRACE_SECONDS: '0' }).shutdownGraceSeconds,
    ).toBe(0);
  });

  it('falls back to 10 seconds of grace when KEEL_SHUTDOWN_GRACE_SECONDS is empty, like the other settings', () => {
    expect(
      workerConfigFromEnvironment({ ...withKey, KEEL_SHUTDOWN_GRACE_SECONDS: '' }).shutdownGraceSeconds,
    ).toBe(10);
  });

  it.each(['ten', '-1', 'Infinity', '10s'])('refuses KEEL_SHUTDOWN_GRACE_SECONDS=%j, quoting it', (value) => {
    const error = configError(() =>
      workerConfigFromEnvironment({ ...withKey, KEEL_SHUTDOWN_GRACE_SECONDS: value }),
    );

    expect(error.message).toContain('KEEL_SHUTDOWN_GRACE_SECONDS');
    expect(error.message).toContain(JSON.stringify(value));
  });
});

describe('docs/configuration.md', () => {
  it('names every environment variable the worker reads', async () => {
    const { readFile } = await import('node:fs/promises');
    const { workerVariables } = await import('../src/config.js');
    const { modelVariables } = await import('../src/model/config.js');
    const page = await readFile(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    // A family may be written once with its common prefix, as in `KEEL_HTTP_ALLOW_HOSTS`, `…_ALLOW_POST`.
    const rows = page.split('\n').filter((line) => line.startsWith('|'));
    const documented = (name: string): boolean =>
      page.includes(`\`${name}\``) ||
      rows.some((row) => {
        const first = /`([A-Z_]+)`/.exec(row)?.[1] ?? '';
        const parts = name.split('_');
        return parts.some((_, index) => {
          const prefix = parts.slice(0, index).join('_');
          return (
            index > 1 &&
            first.startsWith(`${prefix}_`) &&
            row.includes(`\`…_${parts.slice(index).join('_')}\``)
          );
        });
      });
    const missing = [...Object.keys(workerVariables), ...Object.keys(modelVariables)].filter(
      (name) => !documented(name),
    );
    expect(missing).toEqual([]);
  });
});
