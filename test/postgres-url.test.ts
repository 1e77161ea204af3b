import { describe, expect, it } from 'vitest';
import { postgresErrorReason } from '../src/postgres-url.js';

describe('postgresErrorReason', () => {
  const url = 'postgres://keel:p%2Fss%3Aword@db.internal:5432/keel';

  it('masks the decoded password wherever a driver message quotes it, and keeps the first line', () => {
    const error = new Error(
      'could not connect with "p/ss:word" to db.internal (p/ss:word)\n    at Socket.connect',
    );
    expect(postgresErrorReason(error, url)).toBe('could not connect with "***" to db.internal (***)');
  });

  it('gives the message unchanged for a URL without a password, and a reason for a value that is not an Error', () => {
    expect(
      postgresErrorReason(new Error('connect ECONNREFUSED 127.0.0.1:5432'), 'postgres://keel@db/keel'),
    ).toBe('connect ECONNREFUSED 127.0.0.1:5432');
    expect(postgresErrorReason('p/ss:word refused', url)).toBe('*** refused');
  });
});
