import type OpenAI from 'openai';
import { APIConnectionError, APIConnectionTimeoutError, APIError, NotFoundError } from 'openai';
import type {
  Response,
  ResponseCreateParamsNonStreaming,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import { ModelError, shownId } from './model-error.js';
import { readResponseEvents, replayResponse, streamBudgetChars, wasCut } from './stream-events.js';
import type { TurnSink } from './stream-events.js';

/** How often a background response is polled: starting fast, slowing down for long generations. */
export interface PollSchedule {
  initialMs: number;
  maxMs: number;
}

/** Default polling: 250 ms, growing by half each time up to 2 s. */
export const DEFAULT_POLL_SCHEDULE: PollSchedule = { initialMs: 250, maxMs: 2_000 };

/**
 * Longest wait for the server to accept a background request. Until it answers, the response id is
 * unknown, so a crash in this window costs a second generation: the window is bounded rather than
 * left to the turn's whole timeout. Accepting normally takes well under a second.
 */
export const DEFAULT_CREATE_TIMEOUT_MS = 60_000;

/** Options for {@link runBackgroundResponse}. */
export interface BackgroundOptions {
  signal: AbortSignal;
  /** A response an earlier attempt created; re-attached to instead of paying for a new one. */
  resumeResponseId?: string;
  /** Called as soon as the response id is known, before waiting; must record it durably (heartbeat). */
  onResponseId(responseId: string): void;
  /** Called after every poll, to keep the attempt alive. */
  onPoll?(): void;
  schedule?: PollSchedule;
  /** Longest wait for the create request; {@link DEFAULT_CREATE_TIMEOUT_MS} when absent. */
  createTimeoutMs?: number;
  /**
   * Stream the response instead of polling it, telling its text and call starts here. A re-attached
   * attempt streams the response from its first event again (the caller has been told to reset
   * the turn), and a dropped stream resumes after the last event seen (`starting_after`).
   */
  sink?: TurnSink;
  /** With a sink: when a turn still streaming is cut (`model_timeout`), as `StreamBounds` says. */
  cutAtMs?: number | undefined;
}

/** Statuses of a response that is still being generated. */
const RUNNING = new Set(['queued', 'in_progress']);

/**
 * Runs one turn in Responses API background mode: creates the response (or re-attaches to the one an
 * earlier attempt created), reports its id at once, then polls until it is no longer running. A
 * worker that crashes mid-generation therefore costs a retrieve on retry, not a second generation.
 */
export async function runBackgroundResponse(
  client: OpenAI,
  params: ResponseCreateParamsNonStreaming,
  options: BackgroundOptions,
): Promise<Response> {
  const { signal } = options;
  if (options.sink !== undefined) return streamBackground(client, params, { ...options, sink: options.sink });
  const resumed =
    options.resumeResponseId === undefined
      ? undefined
      : await reattach(client, options.resumeResponseId, signal);
  let response: Response = resumed ?? (await create(client, params, signal, options.createTimeoutMs));
  const id = response.id;
  options.onResponseId(id);
  const schedule = options.schedule ?? DEFAULT_POLL_SCHEDULE;
  let delay = schedule.initialMs;
  while (response.status !== undefined && RUNNING.has(response.status)) {
    await abortableDelay(delay, signal);
    delay = Math.min(schedule.maxMs, Math.round(delay * 1.5));
    response = await linked(signal, (request) =>
      client.responses.retrieve(id, {}, { signal: request, maxRetries: 0 }),
    ).catch((error: unknown) => {
      throw cannotRetrieve(error, id) ?? error;
    });
    options.onPoll?.();
  }
  return response;
}

/** {@link runBackgroundResponse} with a stream instead of polls. */
async function streamBackground(
  client: OpenAI,
  params: ResponseCreateParamsNonStreaming,
  options: BackgroundOptions & { sink: TurnSink },
): Promise<Response> {
  const { signal, sink } = options;
  let id: string | undefined;
  let lastSequence: number | undefined;
  const known = (responseId: string): void => {
    if (id !== undefined) return;
    id = responseId;
    options.onResponseId(responseId);
  };
  const tracked = async function* (events: AsyncIterable<ResponseStreamEvent>) {
    for await (const event of events) {
      lastSequence = event.sequence_number;
      options.onPoll?.();
      yield event;
    }
  };
  // Not a spread: the sink may be a class whose methods live on its prototype.
  const watching: TurnSink = {
    text: (delta) => sink.text(delta),
    toolCall: (callId, name) => sink.toolCall(callId, name),
    responseId: known,
  };
  if (options.resumeResponseId !== undefined) {
    const resumed = await reattach(client, options.resumeResponseId, signal);
    if (resumed !== undefined) {
      known(resumed.id);
      if (resumed.status === undefined || !RUNNING.has(resumed.status)) {
        // Finished while no attempt watched: the caller gets the whole turn at once.
        replayResponse(resumed, sink);
        return resumed;
      }
    }
  }
  for (let drops = 0; ; drops += 1) {
    try {
      const events =
        id === undefined
          ? await createStream(client, params, signal, options.createTimeoutMs)
          : await client.responses.retrieve(
              id,
              { stream: true, ...(lastSequence !== undefined ? { starting_after: lastSequence } : {}) },
              { signal, maxRetries: 0 },
            );
      const response = await readResponseEvents(tracked(events), watching, {
        budgetChars: streamBudgetChars(params.max_output_tokens),
        cutAtMs: options.cutAtMs,
      });
      // Cut at its stream budget: a background response goes on without a reader unless cancelled.
      if (wasCut(response) && id !== undefined)
        await client.responses.cancel(id, { signal, maxRetries: 0 }).catch(() => undefined);
      return response;
    } catch (error) {
      // Within one attempt a dropped connection resumes where it stopped; anything else is the attempt's.
      if (id === undefined || signal.aborted || drops >= 3 || !(error instanceof APIConnectionError))
        throw error;
    }
  }
}

/** Creates the background response as a stream, within `timeoutMs` for the server to accept it. */
async function createStream(
  client: OpenAI,
  params: ResponseCreateParamsNonStreaming,
  signal: AbortSignal,
  timeoutMs = DEFAULT_CREATE_TIMEOUT_MS,
): Promise<AsyncIterable<ResponseStreamEvent>> {
  try {
    return await client.responses.create(
      { ...params, background: true, store: true, stream: true },
      { signal, timeout: timeoutMs, maxRetries: 0 },
    );
  } catch (error) {
    if (!(error instanceof APIConnectionTimeoutError) || signal.aborted) throw error;
    throw new ModelError(
      'ModelError.CreateTimeout',
      `The model server did not accept the background request within ${timeoutMs / 1000} s`,
      true,
    );
  }
}

/**
 * Creates the background response, within `timeoutMs`. A server that does not accept in time fails
 * the attempt as retryable `ModelError.CreateTimeout`: the retry creates anew, since a response the
 * server made meanwhile cannot be found again (the Responses API has no way to look one up but its id).
 */
async function create(
  client: OpenAI,
  params: ResponseCreateParamsNonStreaming,
  signal: AbortSignal,
  timeoutMs = DEFAULT_CREATE_TIMEOUT_MS,
): Promise<Response> {
  try {
    return await linked(signal, (request) =>
      client.responses.create(
        { ...params, background: true, store: true },
        { signal: request, timeout: timeoutMs, maxRetries: 0 },
      ),
    );
  } catch (error) {
    if (!(error instanceof APIConnectionTimeoutError) || signal.aborted) throw error;
    throw new ModelError(
      'ModelError.CreateTimeout',
      `The model server did not accept the background request within ${timeoutMs / 1000} s`,
      true,
    );
  }
}

/** HTTP statuses that say the server has no way to give back a response (as opposed to a passing fault). */
const NO_RETRIEVE = new Set([400, 404, 405, 501]);

/** Whether `error` is the server's answer that it cannot give back a response. */
function refusedRetrieve(error: unknown): error is APIError {
  const status: unknown = error instanceof APIError ? error.status : undefined;
  return typeof status === 'number' && NO_RETRIEVE.has(status);
}

/**
 * The failure of a poll on a response the server itself just created in background mode, when its
 * answer says it cannot retrieve responses at all: not worth a retry, which would pay for another
 * generation only to fail the same way. Anything else is left to the usual classification.
 */
function cannotRetrieve(error: unknown, id: string): ModelError | undefined {
  if (!refusedRetrieve(error)) return undefined;
  return new ModelError(
    'ModelError.BackgroundUnsupported',
    `The model server accepted a background request (response ${shownId(id)}) but cannot retrieve it ` +
      `(HTTP ${String(error.status)}: ${error.message}), so the turn cannot be waited for. It does not support ` +
      'background mode: set KEEL_MODEL_MODE=foreground on the worker (the default whenever OPENAI_BASE_URL is set).',
    false,
  );
}

/**
 * The earlier attempt's response, unless it is gone, failed or was cancelled, or the server cannot
 * give it back at all (then a new one is made).
 */
async function reattach(
  client: OpenAI,
  responseId: string,
  signal: AbortSignal,
): Promise<Response | undefined> {
  try {
    const response = await linked(signal, (request) =>
      client.responses.retrieve(responseId, {}, { signal: request, maxRetries: 0 }),
    );
    return response.status === 'failed' || response.status === 'cancelled' ? undefined : response;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    // A server that cannot retrieve (LiteLLM without a database answers 400): start the turn again.
    if (refusedRetrieve(error)) return undefined;
    throw error;
  }
}

/**
 * Runs one request with a signal of its own that follows `signal`. The \`openai\` SDK adds an abort
 * listener to the signal of every request and never removes it: on the turn's long-lived signal,
 * polls would pile them up (a leak, and Node's MaxListenersExceeded warning after ten).
 */
async function linked<T>(signal: AbortSignal, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const forward = (): void => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  try {
    return await request(controller.signal);
  } finally {
    signal.removeEventListener('abort', forward);
  }
}

function abortableDelay(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
