import { describe, expect, it } from 'vitest';
import { secretsFromEnvironment } from '../../src/safety/sanitize.js';

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

  it('returns short values too, and skips variables without a value', () => {
    expect(
      secretsFromEnvironment({
        API_KEY: '123456',
        EMPTY_TOKEN: '',
        UNSET_SECRET: undefined,
        PASSWORD: '12345678',
      }),
    ).toEqual(['123456', '12345678']);
  });

  it('catches the names a review found leaking, and their kin', () => {
    const names = [
      'API_KEY2',
      'SECRETS_X',
      'DB_PASSWORDS',
      'OPENAI_APIKEY_PROD',
      'AUTHORIZATION',
      'X_AUTH_TOKEN',
      'PRIVATE_KEY_PEM',
      'CREDENTIAL',
      'GOOGLE_CREDENTIALS',
      'PASSPHRASE',
      'COOKIE',
      'SESSION',
      'SESSION_SECRET',
      'SENTRY_DSN',
      'DB_PWD',
      'SMTP_PASS',
      'JWT',
      'stripeApiKey',
      'AWS_SECRET_ACCESS_KEY',
      'SLACK_WEBHOOK_KEY',
      'GITHUB_TOKEN3',
    ];
    const environment = Object.fromEntries(names.map((name) => [name, `value-of-${name}`]));
    expect(secretsFromEnvironment(environment).sort()).toEqual(
      names.map((name) => `value-of-${name}`).sort(),
    );
  });

  it('leaves harmless names alone, and names that are only about a credential', () => {
    const names = [
      'KEYBOARD',
      'MONKEY',
      'TURKEY',
      'PATH',
      'HOME',
      'PWD',
      'OLDPWD',
      'GIT_AUTHOR_NAME',
      'PASSAGE',
      'COMPASS_HEADING',
      'SSH_AUTH_SOCK',
      'KEY_FILE',
      'GOOGLE_APPLICATION_CREDENTIALS_PATH',
      'SESSION_TIMEOUT',
      'SESSION_MAX_AGE',
      'TOKEN_ENDPOINT',
      'CACHE_KEY_PREFIX',
      'AUTH_URL',
      'XDG_SESSION_TYPE',
      'DESKTOP_SESSION',
      'NODE_ENV',
      'DATABASE_URL',
    ];
    const environment = Object.fromEntries(names.map((name) => [name, `value-of-${name}`]));
    expect(secretsFromEnvironment(environment)).toEqual([]);
  });

  it('finds the password of a URL or a connection string in any variable', () => {
    expect(
      secretsFromEnvironment({
        DATABASE_URL: 'postgres://app:p%40ss"w0rd@db.internal:5432/app',
        REDIS_URL: 'redis://:redis-pass-1@cache:6379',
        PLAIN_URL: 'https://user@example.com/path',
        PG_CONNECTION: 'host=db user=app password=hunter2x dbname=app',
        AZURE_STORAGE: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc/def==;',
      }).sort(),
    ).toEqual(['abc/def==', 'hunter2x', 'p%40ss"w0rd', 'p@ss"w0rd', 'redis-pass-1'].sort());
  });

  it('takes every line of a multi-line secret on its own, but not the PEM armour', () => {
    const pem =
      '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----';
    expect(secretsFromEnvironment({ PRIVATE_KEY_PEM: pem })).toEqual([
      pem,
      'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
      'BKcwggSjAgEAAoIBAQC7',
    ]);
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
