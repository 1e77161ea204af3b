import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { describe, expect, it, vi } from 'vitest';
import { classifyModelError, retryAfter } from '../../src/model/classify-error.js';
import type { ModelCallContext } from '../../src/model/classify-error.js';
import { ModelError } from '../../src/model/model-error.js';

const SECRET = 'sk-proj-abcdef123456';

const context: ModelCallContext = {
  model: 'gpt-test-model',
  host: 'models.example:8443',
  clean: (text) => text.split(SECRET).join('[redacted]'),
};

/** An `APIError` built the way the SDK builds one from an HTTP error response. */
function apiError(
  status: number,
  body: { message?: string; code?: string } | undefined,
  headers: Record<string, string> = {},
): APIError {
  return APIError.generate(
    status,
    body === undefined ? undefined : { error: body },
    undefined,
    new Headers(headers),
  );
}

const SECONDS = 1000;
const MINUTES = 60 * SECONDS;

describe('classifyModelError', () => {
  it('classifies a 429 as a retryable rate limit that names the host, the status and the server message', () => {
    const failure = classifyModelError(
      apiError(429, { message: 'Rate limit reached for requests', code: 'rate_limit_exceeded' }),
      context,
    );

    expect(failure).toBeInstanceOf(ModelError);
    expect(failure.type).toBe('ModelError.RateLimit');
    expect(failure.retryable).toBe(true);
    expect(failure.message).toBe(
      'The model server models.example:8443 answered 429 (rate limited): Rate limit reached for requests',
    );
    expect(failure.retryAfterMs).toBeUndefined();
  });

  it('honours a retry-after header in seconds on a 429', () => {
    const failure = classifyModelError(
      apiError(429, { message: 'slow down' }, { 'retry-after': '7' }),
      context,
    );

    expect(failure.retryable).toBe(true);
    expect(failure.retryAfterMs).toBe(7 * SECONDS);
  });

  it('honours a retry-after-ms header on a 429', () => {
    const failure = classifyModelError(
      apiError(429, { message: 'slow down' }, { 'retry-after-ms': '1500' }),
      context,
    );

    expect(failure.retryAfterMs).toBe(1500);
  });

  it('caps the delay a 429 asks for at ten minutes', () => {
    const failure = classifyModelError(
      apiError(429, { message: 'slow down' }, { 'retry-after': '86400' }),
      context,
    );

    expect(failure.retryable).toBe(true);
    expect(failure.retryAfterMs).toBe(10 * MINUTES);
  });

  it('ignores a negative or garbage retry-after on a 429 but still retries', () => {
    const negative = classifyModelError(
      apiError(429, { message: 'slow down' }, { 'retry-after': '-30' }),
      context,
    );
    const garbage = classifyModelError(
      apiError(429, { message: 'slow down' }, { 'retry-after': 'whenever' }),
      context,
    );

    expect(negative.retryable).toBe(true);
    expect(negative.retryAfterMs).toBeUndefined();
    expect(garbage.retryable).toBe(true);
    expect(garbage.retryAfterMs).toBeUndefined();
  });

  it('makes a 429 non-retryable when the server sends x-should-retry: false', () => {
    const failure = classifyModelError(
      apiError(429, { message: 'slow down' }, { 'x-should-retry': 'false' }),
      context,
    );

    expect(failure.type).toBe('ModelError.RateLimit');
    expect(failure.retryable).toBe(false);
  });

  it('ends the run on a 429 with code insufficient_quota, pointing at billing', () => {
    const failure = classifyModelError(
      apiError(
        429,
        { message: 'You exceeded your current quota', code: 'insufficient_quota' },
        { 'retry-after': '5' },
      ),
      context,
    );

    expect(failure.type).toBe('ModelError.QuotaExceeded');
    expect(failure.retryable).toBe(false);
    expect(failure.retryAfterMs).toBeUndefined();
    expect(failure.message).toContain('answered 429 (quota exceeded): You exceeded your current quota');
    expect(failure.message).toContain('billing');
  });

  it.each([
    [408, 'ModelError.Timeout'],
    [409, 'ModelError.Conflict'],
    [500, 'ModelError.ServerError'],
    [502, 'ModelError.ServerError'],
    [503, 'ModelError.ServerError'],
  ])('classifies a %i as retryable %s', (status, type) => {
    const failure = classifyModelError(apiError(status, { message: 'try again later' }), context);

    expect(failure.type).toBe(type);
    expect(failure.retryable).toBe(true);
    expect(failure.message).toBe(`The model server models.example:8443 answered ${status}: try again later`);
  });

  it('passes the retry-after of a 503 on as the retry delay', () => {
    const failure = classifyModelError(
      apiError(503, { message: 'overloaded' }, { 'retry-after': '12' }),
      context,
    );

    expect(failure.retryable).toBe(true);
    expect(failure.retryAfterMs).toBe(12 * SECONDS);
  });

  it.each([500, 503])('makes a %i non-retryable when the server sends x-should-retry: false', (status) => {
    const failure = classifyModelError(
      apiError(status, { message: 'do not retry' }, { 'x-should-retry': 'false' }),
      context,
    );

    expect(failure.type).toBe('ModelError.ServerError');
    expect(failure.retryable).toBe(false);
  });

  it.each([
    [400, 'ModelError.BadRequest'],
    [401, 'ModelError.Authentication'],
    [403, 'ModelError.PermissionDenied'],
    [404, 'ModelError.NotFound'],
    [422, 'ModelError.Unprocessable'],
  ])('classifies a %i as non-retryable %s', (status, type) => {
    const failure = classifyModelError(apiError(status, { message: 'refused' }), context);

    expect(failure.type).toBe(type);
    expect(failure.retryable).toBe(false);
    expect(failure.retryAfterMs).toBeUndefined();
    expect(failure.message).toContain(`The model server models.example:8443 answered ${status}: refused`);
  });

  it('tells the operator to check OPENAI_API_KEY on a 401', () => {
    const failure = classifyModelError(apiError(401, { message: 'Incorrect API key provided' }), context);

    expect(failure.message).toBe(
      'The model server models.example:8443 answered 401: Incorrect API key provided. ' +
        'Check OPENAI_API_KEY on the worker.',
    );
  });

  it('tells the operator the key lacks access on a 403', () => {
    const failure = classifyModelError(apiError(403, { message: 'Forbidden' }), context);

    expect(failure.message).toContain('not allowed to use this model or endpoint');
  });

  it('names the model and OPENAI_BASE_URL on a 404', () => {
    const failure = classifyModelError(
      apiError(404, { message: 'The model does not exist', code: 'model_not_found' }),
      context,
    );

    expect(failure.message).toContain('Check the model name (gpt-test-model) and OPENAI_BASE_URL.');
    expect(failure.message).not.toContain('{model}');
  });

  it('classifies any other 4xx as a non-retryable ModelError.ClientError without a hint', () => {
    const failure = classifyModelError(apiError(418, { message: "I'm a teapot" }), context);

    expect(failure.type).toBe('ModelError.ClientError');
    expect(failure.retryable).toBe(false);
    expect(failure.message).toBe("The model server models.example:8443 answered 418: I'm a teapot");
  });

  it('retries a 4xx only when the server explicitly sends x-should-retry: true', () => {
    const failure = classifyModelError(
      apiError(400, { message: 'transient' }, { 'x-should-retry': 'true' }),
      context,
    );

    expect(failure.type).toBe('ModelError.BadRequest');
    expect(failure.retryable).toBe(true);
  });

  it('uses the SDK message without its status prefix when the error body has no message', () => {
    const failure = classifyModelError(apiError(500, undefined), context);

    expect(failure.message).toBe('The model server models.example:8443 answered 500: status code (no body)');
  });

  it('classifies a connection error as retryable and keeps its cleaned cause', () => {
    const failure = classifyModelError(
      new APIConnectionError({
        message: 'Connection error.',
        cause: new Error(`connect ECONNREFUSED 127.0.0.1:443 (key ${SECRET})`),
      }),
      context,
    );

    expect(failure.type).toBe('ModelError.Connection');
    expect(failure.retryable).toBe(true);
    expect(failure.message).toBe(
      'Could not reach the model server models.example:8443: connect ECONNREFUSED 127.0.0.1:443 (key [redacted])',
    );
  });

  it('classifies a connection error without a cause as retryable', () => {
    const failure = classifyModelError(new APIConnectionError({ message: 'Connection error.' }), context);

    expect(failure.type).toBe('ModelError.Connection');
    expect(failure.retryable).toBe(true);
    expect(failure.message).toBe('Could not reach the model server models.example:8443');
  });

  it('classifies a request timeout as a retryable ModelError.Timeout', () => {
    const failure = classifyModelError(new APIConnectionTimeoutError(), context);

    expect(failure.type).toBe('ModelError.Timeout');
    expect(failure.retryable).toBe(true);
    expect(failure.message).toBe('The request to the model server models.example:8443 timed out');
  });

  it('classifies an unknown Error as a retryable ModelError.Unexpected with a cleaned message', () => {
    const failure = classifyModelError(
      new TypeError(`Cannot read properties of undefined (${SECRET})`),
      context,
    );

    expect(failure.type).toBe('ModelError.Unexpected');
    expect(failure.retryable).toBe(true);
    expect(failure.message).toBe(
      'The model call failed unexpectedly: Cannot read properties of undefined ([redacted])',
    );
  });

  it('classifies a thrown non-Error value as ModelError.Unexpected without echoing it', () => {
    const failure = classifyModelError(`thrown string with ${SECRET}`, context);

    expect(failure.type).toBe('ModelError.Unexpected');
    expect(failure.retryable).toBe(true);
    expect(failure.message).toBe('The model call failed unexpectedly: unknown error');
  });

  it('cleans the server message before putting it in the failure', () => {
    const clean = vi.fn(context.clean);
    const failure = classifyModelError(apiError(401, { message: `Incorrect API key provided: ${SECRET}.` }), {
      ...context,
      clean,
    });

    expect(clean).toHaveBeenCalledWith(`Incorrect API key provided: ${SECRET}.`);
    expect(failure.message).not.toContain(SECRET);
    expect(failure.message).toContain('Incorrect API key provided: [redacted]');
  });

  it('keeps the classification of a ModelError and cleans its message', () => {
    const original = new ModelError(
      'ModelError.ServerError',
      `already classified, key ${SECRET}`,
      true,
      2500,
    );

    const failure = classifyModelError(original, context);

    expect(failure).toBeInstanceOf(ModelError);
    expect(failure.type).toBe('ModelError.ServerError');
    expect(failure.message).toBe('already classified, key [redacted]');
    expect(failure.retryable).toBe(true);
    expect(failure.retryAfterMs).toBe(2500);
  });
});

describe('retryAfter', () => {
  const now = Date.UTC(2030, 0, 15, 12, 0, 0);

  it('returns nothing when there are no headers', () => {
    expect(retryAfter(undefined, now)).toBeUndefined();
  });

  it('returns nothing when neither header is present', () => {
    expect(retryAfter(new Headers({ 'content-type': 'application/json' }), now)).toBeUndefined();
  });

  it('reads retry-after as seconds, fractions included', () => {
    expect(retryAfter(new Headers({ 'retry-after': '20' }), now)).toBe(20 * SECONDS);
    expect(retryAfter(new Headers({ 'retry-after': '1.5' }), now)).toBe(1500);
  });

  it('honours a zero delay', () => {
    expect(retryAfter(new Headers({ 'retry-after': '0' }), now)).toBe(0);
  });

  it('reads retry-after-ms as milliseconds', () => {
    expect(retryAfter(new Headers({ 'retry-after-ms': '250' }), now)).toBe(250);
  });

  it('prefers retry-after-ms over retry-after', () => {
    expect(retryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '30' }), now)).toBe(250);
  });

  it('falls back to retry-after when retry-after-ms is garbage', () => {
    expect(retryAfter(new Headers({ 'retry-after-ms': 'soon', 'retry-after': '3' }), now)).toBe(3 * SECONDS);
  });

  it('reads retry-after as an HTTP date relative to now', () => {
    const date = new Date(now + 45 * SECONDS).toUTCString();

    expect(retryAfter(new Headers({ 'retry-after': date }), now)).toBe(45 * SECONDS);
  });

  it('ignores an HTTP date in the past', () => {
    const date = new Date(now - 45 * SECONDS).toUTCString();

    expect(retryAfter(new Headers({ 'retry-after': date }), now)).toBeUndefined();
  });

  it('caps every form of delay at ten minutes', () => {
    const inAnHour = new Date(now + 60 * MINUTES).toUTCString();

    expect(retryAfter(new Headers({ 'retry-after': '3600' }), now)).toBe(10 * MINUTES);
    expect(retryAfter(new Headers({ 'retry-after-ms': '99999999' }), now)).toBe(10 * MINUTES);
    expect(retryAfter(new Headers({ 'retry-after': inAnHour }), now)).toBe(10 * MINUTES);
  });

  it('keeps a delay of exactly ten minutes', () => {
    expect(retryAfter(new Headers({ 'retry-after': '600' }), now)).toBe(10 * MINUTES);
    expect(retryAfter(new Headers({ 'retry-after': '599' }), now)).toBe(599 * SECONDS);
  });

  it('ignores negative delays', () => {
    expect(retryAfter(new Headers({ 'retry-after': '-5' }), now)).toBeUndefined();
    expect(retryAfter(new Headers({ 'retry-after-ms': '-100' }), now)).toBeUndefined();
  });

  it('ignores values that are neither a number nor a date', () => {
    expect(retryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfter(new Headers({ 'retry-after': '' }), now)).toBeUndefined();
  });
});
