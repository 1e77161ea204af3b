import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import type { ModelFailureType } from '../contract/failure-type.js';
import { ModelError } from './model-error.js';

/** Longest server-requested delay we honour; beyond it Temporal's own backoff takes over. */
const MAX_RETRY_AFTER_MS = 10 * 60 * 1000;

/** Where the failed request went, for messages people can act on. */
export interface ModelCallContext {
  model: string;
  /** Host of the model server, never the full URL (it may carry credentials). */
  host: string;
  /** Cleans text from the server before it is stored. */
  clean: (text: string) => string;
}

/**
 * Maps a failed Responses API call to a {@link ModelError}: 429 (honouring `Retry-After`), 408, 409,
 * 5xx, connection errors and timeouts are retryable; other 4xx end the run with a clear reason.
 */
export function classifyModelError(error: unknown, context: ModelCallContext): ModelError {
  // Text from the server (a failed response's message) is cleaned like any other before it is stored.
  if (error instanceof ModelError) {
    return new ModelError(error.type, context.clean(error.message), error.retryable, error.retryAfterMs);
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelError(
      'ModelError.Timeout',
      `The request to the model server ${context.host} timed out`,
      true,
    );
  }
  if (error instanceof APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${context.clean(error.cause.message)}` : '';
    return new ModelError(
      'ModelError.Connection',
      `Could not reach the model server ${context.host}${cause}`,
      true,
    );
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    return classifyStatus(error as APIError<number, Headers | undefined>, context);
  }
  const message = error instanceof Error ? context.clean(error.message) : 'unknown error';
  return new ModelError('ModelError.Unexpected', `The model call failed unexpectedly: ${message}`, true);
}

function classifyStatus(error: APIError<number, Headers | undefined>, context: ModelCallContext): ModelError {
  const status = error.status;
  const detail = context.clean(apiMessage(error)).replace(/\.+$/, '');
  const prefix = `The model server ${context.host} answered ${status}`;
  const shouldRetry = error.headers?.get('x-should-retry');
  if (status === 429) {
    if (error.code === 'insufficient_quota') {
      return new ModelError(
        'ModelError.QuotaExceeded',
        `${prefix} (quota exceeded): ${detail}. Check the account's billing.`,
        false,
      );
    }
    return new ModelError(
      'ModelError.RateLimit',
      `${prefix} (rate limited): ${detail}`,
      shouldRetry !== 'false',
      retryAfter(error.headers),
    );
  }
  if (status === 408 || status === 409 || status >= 500) {
    const type =
      status === 408
        ? 'ModelError.Timeout'
        : status === 409
          ? 'ModelError.Conflict'
          : 'ModelError.ServerError';
    return new ModelError(type, `${prefix}: ${detail}`, shouldRetry !== 'false', retryAfter(error.headers));
  }
  if ((status === 400 || status === 404) && isPreviousResponseMissing(error)) {
    return new ModelError(
      'ModelError.PreviousResponseNotFound',
      `${prefix}: ${detail}. The response this run chains from (previous_response_id) is no longer stored ` +
        'on the model server: it expired or was deleted, or the server keeps no responses. Start the run with ' +
        'conversation "stateless" to keep the whole conversation in the run instead.',
      false,
    );
  }
  const [type, hint] = CLIENT_ERRORS[status] ?? ['ModelError.ClientError', ''];
  return new ModelError(
    type,
    `${prefix}: ${detail}${hint.replace('{model}', () => context.model)}`,
    shouldRetry === 'true',
  );
}

/** Non-retryable statuses: their failure type and a hint on what to fix. */
const CLIENT_ERRORS: Record<number, [ModelFailureType, string]> = {
  400: ['ModelError.BadRequest', ''],
  401: ['ModelError.Authentication', '. Check OPENAI_API_KEY on the worker.'],
  403: ['ModelError.PermissionDenied', '. The key is not allowed to use this model or endpoint.'],
  404: ['ModelError.NotFound', '. Check the model name ({model}) and OPENAI_BASE_URL.'],
  422: ['ModelError.Unprocessable', ''],
};

/** The request chained from a response the server no longer has (OpenAI: `previous_response_not_found`). */
function isPreviousResponseMissing(error: APIError): boolean {
  return error.code === 'previous_response_not_found' || error.param === 'previous_response_id';
}

function apiMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined; // eslint-disable-line @typescript-eslint/no-unnecessary-type-assertion
  if (body !== undefined && typeof body.message === 'string' && body.message !== '') return body.message;
  return error.message.replace(/^\d{3}\s*/, '') || 'no message';
}

/** The delay a 429 or 5xx asks for, from `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
export function retryAfter(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  let delay: number | undefined;
  const milliseconds = headers.get('retry-after-ms');
  if (milliseconds !== null && /^\s*\d+(\.\d+)?\s*$/.test(milliseconds)) delay = Number(milliseconds);
  else {
    const value = headers.get('retry-after');
    if (value !== null) {
      delay = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
    }
  }
  if (delay === undefined || !Number.isFinite(delay) || delay < 0) return undefined;
  return Math.min(delay, MAX_RETRY_AFTER_MS);
}
