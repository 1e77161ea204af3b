import path from 'node:path';
import type { Observation } from '../contract/observation.js';
import type { ToolCall } from '../contract/tool-call.js';
import type { ApprovalRequired } from '../contract/tool-request.js';
import type { Logger } from '../logger.js';
import type { Sanitizer } from '../safety/sanitize.js';
import type { Tool, ToolOutput } from './define-tool.js';
import { runOnce } from './idempotency.js';
import type { IdempotencyStore } from './idempotency.js';
import type { ToolRegistry } from './registry.js';
import { ToolError } from './tool-error.js';

/** What the executor needs from the worker. */
export interface ExecutorDependencies {
  registry: ToolRegistry;
  sanitizer: Sanitizer;
  logger: Logger;
  /** Where `context.once` remembers side effects. */
  idempotencyStore: IdempotencyStore;
}

/** One tool call to run. */
export interface ExecuteRequest {
  call: ToolCall;
  /** Tools offered in this run; a call to any other name is an unknown tool. All when absent. */
  allowedTools?: readonly string[];
  /** Stable across retries of this call; passed to the tool. */
  idempotencyKey: string;
  /** Characters of output the model may see; longer output becomes a preview. */
  outputCharLimit: number;
  /** Seconds the call may take; the tool's own timeout when absent. */
  timeoutSeconds?: number;
  /** Cancellation from outside (run cancelled, worker shutting down). Rethrown, never an observation. */
  signal?: AbortSignal;
  /** Progress reports from the tool. */
  heartbeat?: (details?: unknown) => void;
}

/** Marks the abort reason of our own timeout, to tell it apart from an outside cancellation. */
class ToolTimeout extends Error {
  override name = 'ToolTimeout';
}

/** Output up to this many times the limit is redacted whole, in case redaction brings it under. */
const OUTPUT_REDACTED_WHOLE = 4;

/** Node error codes whose meaning is safe and useful for the model. */
const SYSTEM_ERRORS: Record<string, string> = {
  ENOENT: 'No such file or directory',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
  EEXIST: 'Already exists',
  ENOTEMPTY: 'Directory not empty',
  ELOOP: 'Too many levels of symbolic links',
  ENAMETOOLONG: 'File name too long',
  EMFILE: 'Too many open files; try again',
};

/**
 * Runs one tool call and always returns an observation for it: unknown tool, malformed JSON, schema
 * violations, timeouts, tool errors and oversized output are all data the model can act on. Only an
 * outside cancellation (`request.signal`) escapes, as the signal's reason.
 */
export async function executeToolCall(
  request: ExecuteRequest,
  dependencies: ExecutorDependencies,
): Promise<Observation> {
  return executeUnlessApprovalNeeded(request, dependencies) as Promise<Observation>;
}

/**
 * {@link executeToolCall} with an approval step after the arguments are validated: `check` asks the
 * tool's own rule, `require` always stops. Answers `approvalRequired` (nothing ran) when approval is
 * needed; without `approval` it is exactly `executeToolCall`.
 */
export async function executeUnlessApprovalNeeded(
  request: ExecuteRequest,
  dependencies: ExecutorDependencies,
  approval?: 'check' | 'require',
): Promise<Observation | ApprovalRequired> {
  const { call } = request;
  const fail = (
    error: Exclude<Observation, { ok: true }>['error'],
    message: string,
    preview?: string,
  ): Observation =>
    preview === undefined
      ? { callId: call.callId, ok: false, error, message }
      : { callId: call.callId, ok: false, error, message, preview };

  const offered = request.allowedTools ?? dependencies.registry.names();
  const tool = offered.includes(call.name) ? dependencies.registry.get(call.name) : undefined;
  if (tool === undefined) {
    const available = offered.length === 0 ? 'none' : offered.join(', ');
    return fail(
      'unknown_tool',
      `There is no tool named ${JSON.stringify(call.name)}. Available tools: ${available}.`,
    );
  }

  let decoded: unknown;
  try {
    decoded = call.argumentsJson.trim() === '' ? {} : JSON.parse(call.argumentsJson);
  } catch (error) {
    const detail = dependencies.sanitizer.message((error as Error).message);
    return fail(
      'invalid_json',
      `The arguments for ${tool.name} are not valid JSON (${detail}). Send one JSON object.`,
    );
  }
  const parsed = tool.parseArguments(decoded);
  if (!parsed.ok) {
    return fail(
      'invalid_arguments',
      `The arguments for ${tool.name} do not match its schema:\n${parsed.issues.map((line) => `- ${line}`).join('\n')}`,
    );
  }

  if (approval !== undefined && (await needsApproval(tool, parsed.input, approval, request, dependencies))) {
    return { callId: call.callId, approvalRequired: true };
  }

  let output: ToolOutput;
  try {
    output = await runWithTimeout(tool, parsed.input, request, dependencies);
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason ?? error;
    if (error instanceof ToolTimeout) {
      return fail(
        'timeout',
        `${tool.name} did not finish within ${request.timeoutSeconds ?? tool.timeoutSeconds} seconds and was stopped.`,
      );
    }
    return fail('tool_error', describeToolFailure(tool, call, error, dependencies));
  }

  let text: string;
  try {
    text = typeof output === 'string' ? output : (JSON.stringify(output) ?? 'null');
  } catch (error) {
    dependencies.logger.error(`Tool ${tool.name} returned a value that is not JSON`, {
      callId: call.callId,
      error,
    });
    return fail(
      'tool_error',
      `${tool.name} returned a result that could not be read (reference ${call.callId}).`,
    );
  }
  const previewLength = Math.max(0, request.outputCharLimit - 400);
  const tooLarge = (length: number, preview: string): Observation =>
    fail(
      'output_too_large',
      `The output of ${tool.name} was ${length} characters, more than the limit of ${request.outputCharLimit}; ` +
        `preview holds the first ${previewLength}. Ask for less, e.g. a narrower path or a line range.`,
      cutAt(preview, previewLength),
    );
  // Output many times the limit cannot fit however much redaction removes: only its preview is
  // redacted, so a huge output costs the worker's event loop no more than a small one.
  if (text.length > OUTPUT_REDACTED_WHOLE * request.outputCharLimit + 65_536)
    return tooLarge(text.length, dependencies.sanitizer.head(text, previewLength));
  text = dependencies.sanitizer.output(text);
  if (text.length <= request.outputCharLimit) return { callId: call.callId, ok: true, output: text };
  return tooLarge(text.length, text);
}

/** Whether a person must approve this call first. A rule that fails asks for approval: the safe side. */
async function needsApproval(
  tool: Tool,
  input: unknown,
  approval: 'check' | 'require',
  request: ExecuteRequest,
  dependencies: ExecutorDependencies,
): Promise<boolean> {
  if (approval === 'require' || tool.approval === 'always') return true;
  if (tool.approval === 'never') return false;
  try {
    return await tool.needsApproval(input);
  } catch (error) {
    dependencies.logger.error(`The approval rule of ${tool.name} failed; asking for approval`, {
      callId: request.call.callId,
      error,
    });
    return true;
  }
}

async function runWithTimeout(
  tool: Tool,
  input: unknown,
  request: ExecuteRequest,
  dependencies: ExecutorDependencies,
): Promise<ToolOutput> {
  const controller = new AbortController();
  const outside = request.signal;
  const forward = (): void => controller.abort(outside?.reason);
  if (outside?.aborted) forward();
  outside?.addEventListener('abort', forward, { once: true });
  const timer = setTimeout(
    () => controller.abort(new ToolTimeout(`${tool.name} timed out`)),
    (request.timeoutSeconds ?? tool.timeoutSeconds) * 1000,
  );
  // A tool that ignores its signal is abandoned when the signal fires: the call still gets its answer.
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = (): void => reject(controller.signal.reason as Error);
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      (async () =>
        tool.execute(input, {
          signal: controller.signal,
          callId: request.call.callId,
          idempotencyKey: request.idempotencyKey,
          // Heartbeat details are kept by Temporal and shown with the activity: a tool's own secrets must not be.
          heartbeat: (details) => request.heartbeat?.(dependencies.sanitizer.value(details)),
          // The record outlives the call on disk and comes back as output on a retry: store it redacted.
          once: (step, effect) =>
            runOnce(
              dependencies.idempotencyStore,
              `${request.idempotencyKey}:${step}`,
              async () => dependencies.sanitizer.value(await effect()),
              (error) =>
                dependencies.logger.error(
                  `The side-effect store failed after ${tool.name} ran; a retry of this call will be refused as in doubt`,
                  { callId: request.call.callId, error },
                ),
            ),
        }))(),
      aborted,
    ]);
  } catch (error) {
    // An AbortError thrown by the tool itself after our timeout fired is still a timeout.
    if (controller.signal.aborted && controller.signal.reason instanceof ToolTimeout)
      throw controller.signal.reason;
    throw error;
  } finally {
    clearTimeout(timer);
    outside?.removeEventListener('abort', forward);
  }
}

function describeToolFailure(
  tool: Tool,
  call: ToolCall,
  error: unknown,
  dependencies: ExecutorDependencies,
): string {
  if (error instanceof ToolError) return dependencies.sanitizer.message(error.message);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const known = code === undefined ? undefined : SYSTEM_ERRORS[code];
  if (known !== undefined) {
    const errorPath = (error as NodeJS.ErrnoException).path;
    // The file tools give paths relative to their workspace; any other path (absolute, or climbing out
    // with `..`) could name something outside and is left out.
    const shown =
      typeof errorPath === 'string' &&
      errorPath !== '' &&
      !path.isAbsolute(errorPath) &&
      !errorPath.split(/[\\/]/).includes('..')
        ? `: ${dependencies.sanitizer.message(errorPath)}`
        : '';
    return `${tool.name} failed: ${known}${shown}`;
  }
  dependencies.logger.error(`Tool ${tool.name} failed`, { callId: call.callId, error });
  return `${tool.name} failed with an internal error (reference ${call.callId}); the details are in the worker log.`;
}

/** The first `length` characters, not splitting a surrogate pair. */
function cutAt(text: string, length: number): string {
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}
