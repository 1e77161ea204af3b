import { describe, expect, it } from 'vitest';
import { createSanitizer, secretsFromEnvironment } from '../../src/safety/sanitize.js';

describe('secretsFromEnvironment', () => {
  it('picks the values of variables named like keys, tokens, secrets and passwords', () => {
    const secrets = secretsFromEnvironment({
      OPENAI_API_KEY: 'sk-live-1234567890',
      GITHUB_TOKEN: 'ghp_abcdefgh12345',
      CLIENT_SECRET: 'client-secret-value',
      DB_PASSWORD: 'correct horse',
      lowercase_token: 'lower-case-value',
      HOME: '/home/keel',
      PATH: '/usr/bin:/bin',
      NODE_ENV: 'production',
    });
    expect(secrets.sort()).toEqual(
      [
        'sk-live-1234567890',
        'ghp_abcdefgh12345',
        'client-secret-value',
        'correct horse',
        'lower-case-value',
      ].sort(),
    );
  });

  it('ignores values shorter than 8 characters and variables without a value', () => {
    expect(
      secretsFromEnvironment({
        API_KEY: '1234567',
        EMPTY_TOKEN: '',
        UNSET_SECRET: undefined,
        PASSWORD: '12345678',
      }),
    ).toEqual(['12345678']);
  });

  it('reads process.env when given nothing', () => {
    const name = 'KEEL_SANITIZE_TEST_TOKEN';
    process.env[name] = 'from-process-env-123';
    try {
      expect(secretsFromEnvironment()).toContain('from-process-env-123');
    } finally {
      delete process.env[name];
    }
  });
});

describe('createSanitizer', () => {
  it('redacts exact secrets from output, every occurrence', () => {
    const sanitizer = createSanitizer({ secrets: ['hunter22-secret'] });
    expect(sanitizer.output('a hunter22-secret b hunter22-secret')).toBe('a [redacted] b [redacted]');
  });

  it('redacts the longer of two overlapping secrets whole', () => {
    const sanitizer = createSanitizer({ secrets: ['abcd', 'abcdefgh'] });
    expect(sanitizer.output('x abcdefgh y abcd')).toBe('x [redacted] y [redacted]');
  });

  it('does not treat secrets shorter than 4 characters as secrets', () => {
    const sanitizer = createSanitizer({ secrets: ['abc', ''] });
    expect(sanitizer.output('abc abc')).toBe('abc abc');
  });

  it('leaves output otherwise untouched: credential shapes, paths and length are the model’s business', () => {
    const sanitizer = createSanitizer({
      paths: [{ path: '/srv/workspace', label: '.' }],
      maxMessageLength: 10,
    });
    const text = 'key sk-abcdefghijklmnop at /srv/workspace/a.txt with Bearer abcdefghijklmnop';
    expect(sanitizer.output(text)).toBe(text);
  });

  it('redacts exact secrets from messages too', () => {
    const sanitizer = createSanitizer({ secrets: ['hunter22-secret'] });
    expect(sanitizer.message('login with hunter22-secret failed')).toBe('login with [redacted] failed');
  });

  it('redacts OpenAI-style keys from messages, masked forms included', () => {
    const sanitizer = createSanitizer();
    expect(sanitizer.message('Incorrect API key provided: sk-proj-abcDEF123456, check it')).toBe(
      'Incorrect API key provided: [redacted], check it',
    );
    expect(sanitizer.message('Incorrect API key provided: sk-abc12***********wxyz')).toBe(
      'Incorrect API key provided: [redacted]',
    );
  });

  it('redacts bearer tokens, GitHub tokens and AWS access key ids from messages', () => {
    const sanitizer = createSanitizer();
    expect(sanitizer.message('Authorization: Bearer eyJhbGciOi.payload.sig')).toBe(
      'Authorization: [redacted]',
    );
    expect(sanitizer.message('authorization: bearer abcdefgh1234')).toBe('authorization: [redacted]');
    expect(sanitizer.message('token ghp_abcdefghij1234567890 expired')).toBe('token [redacted] expired');
    expect(sanitizer.message('key AKIAABCDEFGHIJKLMNOP denied')).toBe('key [redacted] denied');
  });

  it('does not redact words that only look a little like credentials', () => {
    const sanitizer = createSanitizer();
    const text = 'ask-questions task-runner sk-short Bearer abc';
    expect(sanitizer.message(text)).toBe(text);
  });

  it('replaces worker paths in messages with their labels, the most specific path first', () => {
    const sanitizer = createSanitizer({
      paths: [
        { path: '/home/keel', label: '~' },
        { path: '/home/keel/workspace', label: '.' },
      ],
    });
    expect(sanitizer.message('cannot open /home/keel/workspace/src/a.ts')).toBe('cannot open ./src/a.ts');
    expect(sanitizer.message('config at /home/keel/.config/keel.json')).toBe('config at ~/.config/keel.json');
    expect(sanitizer.message('root /home/keel/workspace is read-only')).toBe('root . is read-only');
  });

  it('drops a path entirely when its label is empty', () => {
    const sanitizer = createSanitizer({ paths: [{ path: '/srv/workspace', label: '' }] });
    expect(sanitizer.message('missing /srv/workspace/src/a.ts')).toBe('missing src/a.ts');
  });

  it('ignores the filesystem root as a path to hide', () => {
    const sanitizer = createSanitizer({ paths: [{ path: '/', label: '<root>' }] });
    expect(sanitizer.message('see /etc/hosts')).toBe('see /etc/hosts');
  });

  it('bounds the length of a message and marks the cut', () => {
    const sanitizer = createSanitizer({ maxMessageLength: 10 });
    expect(sanitizer.message('0123456789')).toBe('0123456789');
    expect(sanitizer.message('0123456789abc')).toBe('0123456789… [truncated]');
  });

  it('bounds messages to 2000 characters by default', () => {
    const sanitizer = createSanitizer();
    expect(sanitizer.message('x'.repeat(2_000))).toBe('x'.repeat(2_000));
    expect(sanitizer.message('x'.repeat(2_001))).toBe(`${'x'.repeat(2_000)}… [truncated]`);
  });

  it('redacts before cutting, so a secret at the cut does not leak in part', () => {
    const sanitizer = createSanitizer({ secrets: ['hunter22-secret'], maxMessageLength: 12 });
    expect(sanitizer.message('password hunter22-secret')).toBe('password [re… [truncated]');
  });
});
