import { describe, expect, it } from 'vitest';
import { createSanitizer } from '../../src/safety/sanitize.js';

describe('createSanitizer', () => {
  it('redacts exact secrets from output, every occurrence', () => {
    const sanitizer = createSanitizer({ secrets: ['hunter22-secret'] });
    expect(sanitizer.output('a hunter22-secret b hunter22-secret')).toBe('a [redacted] b [redacted]');
  });

  it('redacts the longer of two overlapping secrets whole', () => {
    const sanitizer = createSanitizer({ secrets: ['abcd', 'abcdefgh'] });
    expect(sanitizer.output('x abcdefgh y abcd')).toBe('x [redacted] y [redacted]');
  });

  it('does not treat secrets shorter than 4 characters, or words like true, as secrets', () => {
    const sanitizer = createSanitizer({ secrets: ['abc', '', '1', 'true', 'null'] });
    const text = '{"abc":1,"ok":true,"next":null}';
    expect(sanitizer.output(text)).toBe(text);
  });

  it('redacts a secret of 4 to 7 characters as a whole word only', () => {
    const sanitizer = createSanitizer({ secrets: ['hunter', 'p4ss'] });
    expect(sanitizer.output('pw=hunter; "hunter" hunter')).toBe('pw=[redacted]; "[redacted]" [redacted]');
    expect(sanitizer.output('hunters manhunter hunter2 p4ssword')).toBe('hunters manhunter hunter2 p4ssword');
    expect(sanitizer.output('user:p4ss@host')).toBe('user:[redacted]@host');
  });

  it('redacts a short secret right next to a longer one, whose characters are no part of its word', () => {
    const sanitizer = createSanitizer({ secrets: ['hunt3r', 'sk-test-abcdef12'] });
    expect(sanitizer.output('sk-test-abcdef12hunt3r hunt3rsk-test-abcdef12')).toBe('[redacted] [redacted]');
  });

  it('redacts a secret of 8 characters or more inside words too', () => {
    const sanitizer = createSanitizer({ secrets: ['hunter22'] });
    expect(sanitizer.output('xhunter22x')).toBe('x[redacted]x');
  });

  it('redacts a secret with quotes and backslashes inside JSON output, escaped once or twice', () => {
    const secret = 'pa"ss\\word-42';
    const sanitizer = createSanitizer({ secrets: [secret] });
    const once = JSON.stringify({ env: { DB_PASSWORD: secret } });
    expect(once).not.toContain(secret);
    expect(sanitizer.output(once)).toBe('{"env":{"DB_PASSWORD":"[redacted]"}}');
    expect(sanitizer.output(JSON.stringify(once))).toBe(
      JSON.stringify('{"env":{"DB_PASSWORD":"[redacted]"}}'),
    );
  });

  it('redacts a non-ASCII secret written as \\u escapes, as Python writes JSON', () => {
    const sanitizer = createSanitizer({ secrets: ['contraseña-9'] });
    expect(sanitizer.output('{"pw": "contrase\\u00f1a-9"}')).toBe('{"pw": "[redacted]"}');
  });

  it('redacts URL-encoded forms of a secret', () => {
    const secret = 'a b/c?d&e=f"g';
    const sanitizer = createSanitizer({ secrets: [secret] });
    expect(sanitizer.output(`?q=${encodeURIComponent(secret)}`)).toBe('?q=[redacted]');
    expect(sanitizer.output(`?q=${encodeURIComponent(secret).replace(/%20/g, '+')}`)).toBe('?q=[redacted]');
    expect(sanitizer.output(`?q=${encodeURIComponent(secret).toLowerCase()}`)).toBe('?q=[redacted]');
    expect(sanitizer.output(encodeURI(secret))).toBe('[redacted]');
  });

  it('redacts base64 of a secret at any alignment, URL-safe too, and hex', () => {
    const secret = 'sk-live-abcdefghijkl>?';
    const sanitizer = createSanitizer({ secrets: [secret] });
    for (const prefix of ['', 'u', 'us', 'user:']) {
      const encoded = Buffer.from(prefix + secret + '!').toString('base64');
      expect(sanitizer.output(`Basic ${encoded}`), prefix).toContain('[redacted]');
      expect(sanitizer.output(`Basic ${encoded}`), prefix).not.toContain(encoded);
      const urlSafe = Buffer.from(prefix + secret + '!').toString('base64url');
      expect(sanitizer.output(urlSafe), prefix).toContain('[redacted]');
    }
    expect(sanitizer.output(Buffer.from(secret).toString('hex'))).toBe('[redacted]');
    expect(sanitizer.output(Buffer.from(secret).toString('hex').toUpperCase())).toBe('[redacted]');
  });

  it('treats regular-expression characters in a secret as plain characters', () => {
    const secret = 'a.b*c(d)[e]{f}|g^$h+i?';
    const sanitizer = createSanitizer({ secrets: [secret] });
    expect(sanitizer.output(`x ${secret} y`)).toBe('x [redacted] y');
    expect(sanitizer.output('x aXb*c(d)[e]{f}|g^$h+i? y')).toBe('x aXb*c(d)[e]{f}|g^$h+i? y');
  });

  it('scans 5 MiB of output for 30 secrets without stalling the worker (prints the time)', () => {
    const secrets = Array.from({ length: 30 }, (_, index) => `secret-value-${index}-${'q'.repeat(index)}`);
    const sanitizer = createSanitizer({ secrets });
    const clean = 'lorem ipsum dolor sit amet 0123456789 '.repeat((5 * 1024 * 1024) / 38);
    const dirty = `${clean.slice(0, 1_000_000)}${secrets[7]!}${clean.slice(1_000_000)}`;
    const time = (text: string) => {
      const started = performance.now();
      const result = sanitizer.output(text);
      return { ms: performance.now() - started, result };
    };
    const withoutSecret = time(clean);
    const withSecret = time(dirty);
    console.log(
      `sanitizer, 30 secrets, 5 MiB: ${withoutSecret.ms.toFixed(1)} ms without a secret, ${withSecret.ms.toFixed(1)} ms with one`,
    );
    expect(withoutSecret.result).toBe(clean);
    expect(withSecret.result).toContain('[redacted]');
    // Generous bounds: the point is that the scan is linear and cheap, not a timing contract.
    expect(withoutSecret.ms).toBeLessThan(2_000);
    expect(withSecret.ms).toBeLessThan(5_000);
  });

  it('gives the head of the redacted text from a window, wherever a secret meets the window end', () => {
    const secrets = ['long-secret-"value"-0123456789', 'tiny', 'mid-secret'];
    const sanitizer = createSanitizer({ secrets });
    const length = 50;
    const fillers = [
      '',
      `${JSON.stringify(secrets[0])} `.repeat(40),
      'tiny '.repeat(40),
      `${Buffer.from(secrets[0]!).toString('hex')}|`.repeat(10),
    ];
    for (const filler of fillers) {
      for (let offset = 0; offset < 400; offset += 1) {
        const text = `${'x'.repeat(offset)}${filler}${secrets[offset % 3]!}${'y'.repeat(2_000)}`;
        const head = sanitizer.head(text, length);
        expect(sanitizer.output(text).startsWith(head), `${filler.length}/${offset}`).toBe(true);
        expect(head.length).toBeLessThanOrEqual(length);
      }
    }
    expect(sanitizer.head(`${'x'.repeat(5_000)}`, length)).toBe('x'.repeat(length));
  });

  it('redacts a flood of long and short secrets in linear time (prints the time)', () => {
    const sanitizer = createSanitizer({ secrets: ['long-secret-value-1', 'tiny'] });
    // Each short secret touches a long one, so every whole-word check asks about the redacted spans.
    const flood = 'long-secret-value-1tiny '.repeat(100_000);
    const started = performance.now();
    const result = sanitizer.output(flood);
    const ms = performance.now() - started;
    console.log(`sanitizer, 200,000 secrets in 2.4 MB: ${ms.toFixed(1)} ms`);
    expect(result).toBe('[redacted] '.repeat(100_000));
    expect(ms).toBeLessThan(5_000);
  });

  it('hides overlapping secrets whole, whichever starts first', () => {
    const sanitizer = createSanitizer({ secrets: ['abcdef12', '12345678'] });
    expect(sanitizer.output('<abcdef12345678>')).toBe('<[redacted]>');
  });

  it('redacts every string and key of plain data and keeps other values', () => {
    const sanitizer = createSanitizer({ secrets: ['hunter22-secret'] });
    const date = new Date(0);
    expect(
      sanitizer.value({
        text: 'say hunter22-secret',
        list: ['hunter22-secret', 3, null, true],
        'hunter22-secret': { nested: '"hunter22-secret"' },
        date,
      }),
    ).toEqual({
      text: 'say [redacted]',
      list: ['[redacted]', 3, null, true],
      '[redacted]': { nested: '"[redacted]"' },
      date,
    });
  });

  it('redacts data that refers to itself, and shared parts wherever they appear', () => {
    const sanitizer = createSanitizer({ secrets: ['hunter22-secret'] });
    const shared = { text: 'hunter22-secret' };
    const details: Record<string, unknown> = { text: 'hunter22-secret', first: shared, second: shared };
    details.self = details;
    // A shared object is redacted wherever it appears; a cycle leads nowhere, not back to the original.
    expect(sanitizer.value(details)).toEqual({
      text: '[redacted]',
      first: { text: '[redacted]' },
      second: { text: '[redacted]' },
      self: '[cycle]',
    });
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

  it('drops stack-trace lines from messages, keeping the message and ordinary prose', () => {
    const sanitizer = createSanitizer();
    const stack = [
      'Error: query failed at line 3',
      '    at Query.run (/srv/keel/node_modules/db/query.js:120:15)',
      '    at async file:///srv/keel/tools/db.js:14:7',
      '    at new Pool (<anonymous>)',
      '    at async Promise.all (index 0)',
      '    ... 4 lines matching cause stack trace ...',
      'caused by: connection refused',
    ].join('\n');
    expect(sanitizer.message(stack)).toBe('Error: query failed at line 3\ncaused by: connection refused');
  });

  it('drops stack frames from a stack written as a JSON string too', () => {
    const sanitizer = createSanitizer();
    const error = new Error('boom');
    const message = `failed: ${JSON.stringify({ stack: error.stack })}`;
    expect(message).toMatch(/\\n +at /);
    expect(sanitizer.message(message)).toBe('failed: {"stack":"Error: boom"}');
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
