import { describe, expect, it } from 'vitest';
import { redactingLogger } from '../../src/safety/redacting-logger.js';
import { createSanitizer } from '../../src/safety/sanitize.js';
import { RecordingLogger } from '../support/loggers.js';

const SECRET = 'hunter22-log-secret';

class QueryError extends Error {
  override name = 'QueryError';
  constructor(
    message: string,
    readonly query: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

describe('redactingLogger', () => {
  const sanitizer = createSanitizer({ secrets: [SECRET] });

  it('redacts the message and every string of meta, keys included', () => {
    const inner = new RecordingLogger();
    redactingLogger(inner, sanitizer).warn(`login as ${SECRET}`, {
      attempt: 2,
      detail: { [SECRET]: [`"${SECRET}"`] },
    });
    expect(inner.entries).toEqual([
      {
        level: 'warn',
        message: 'login as [redacted]',
        meta: { attempt: 2, detail: { '[redacted]': ['"[redacted]"'] } },
      },
    ]);
  });

  it('keeps an error whole (class, stack, cause, own fields) with its secrets redacted', () => {
    const inner = new RecordingLogger();
    const cause = new Error(`connect with ${SECRET}`);
    const error = new QueryError(`query failed for ${SECRET}`, `SELECT '${SECRET}'`, { cause });
    redactingLogger(inner, sanitizer).error('Tool db failed', { error });
    const logged = inner.entries[0]!.meta!.error as QueryError;
    expect(logged).toBeInstanceOf(QueryError);
    expect(logged.name).toBe('QueryError');
    expect(logged.message).toBe('query failed for [redacted]');
    expect(logged.query).toBe("SELECT '[redacted]'");
    expect(logged.stack).toMatch(/^QueryError: query failed for \[redacted\]\n\s+at /);
    expect((logged.cause as Error).message).toBe('connect with [redacted]');
    expect(
      JSON.stringify({ ...logged, stack: logged.stack, cause: (logged.cause as Error).stack }),
    ).not.toContain(SECRET);
  });

  it('passes an error without secrets on as it is', () => {
    const inner = new RecordingLogger();
    const error = new TypeError('x is not a function');
    redactingLogger(inner, sanitizer).error('failed', { error });
    expect(inner.entries[0]!.meta!.error).toBe(error);
  });

  it('copes with data that refers to itself', () => {
    const inner = new RecordingLogger();
    const loop: Record<string, unknown> = { name: SECRET };
    loop.self = loop;
    redactingLogger(inner, sanitizer).info('loop', { loop });
    expect((inner.entries[0]!.meta!.loop as Record<string, unknown>).name).toBe('[redacted]');
  });
});
