/**
 * Defaults shared by the workflow and the worker. One definition, imported by both sides, so the
 * limits the workflow enforces and the limits the activities apply can never drift apart.
 */

/** Task queue the worker polls and clients start runs on, unless configured otherwise. */
export const DEFAULT_TASK_QUEUE = 'keel';

/** Workflow type name other services use to start a run. */
export const AGENT_RUN_WORKFLOW = 'agentRun';

/** Model turns a run may take before it stops with `max_turns`. */
export const DEFAULT_MAX_TURNS = 20;

/** Upper bound on `maxTurns` accepted in a run input; runs continue as new long before it. */
export const MAX_TURNS_LIMIT = 1_000_000;

/** Seconds a session waits for a follow-up message after an answer before it ends. */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 60 * 60;

/**
 * Bytes of one payload Keel lets cross the activity boundary. Temporal refuses payloads over 2 MiB
 * (`limit.blobSize.error`) and a refused task would be retried forever; Keel stays well below it and
 * shrinks, or fails clearly, instead.
 */
export const PAYLOAD_BYTES_LIMIT = 1536 * 1024;

/** Messages a run holds for its next turn; more are refused until the run takes them. */
export const MAX_QUEUED_MESSAGES = 32;

/** Bytes of queued messages a run holds; a message that would go beyond is refused. */
export const QUEUED_MESSAGES_BYTES_LIMIT = 256 * 1024;

/** Bytes a stateless run's conversation may keep when it continues as new (older turns are dropped). */
export const CARRIED_CONVERSATION_BYTES_LIMIT = 512 * 1024;

/** Characters of tool output the model sees before the output is cut to a preview. */
export const DEFAULT_OUTPUT_CAP = 12_000;

/** Seconds a tool may run when its definition does not say. */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 60;

/** Longest timeout a tool may declare: a day. Longer work belongs in its own workflow. */
export const MAX_TOOL_TIMEOUT_SECONDS = 24 * 60 * 60;

/**
 * Most output tokens a turn may spend (reasoning included) when neither the run nor the worker says:
 * OpenAI's advice for reasoning models is to leave at least 25,000. Without a cap a runaway answer
 * writes until the turn's timeout, and is then paid for and thrown away.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_768;

/** Seconds one model turn (one Responses API request) may take. */
export const DEFAULT_MODEL_TIMEOUT_SECONDS = 600;

/**
 * Seconds without a heartbeat after which Temporal declares an activity's worker lost and retries
 * it elsewhere. Short, so that a crashed worker costs seconds, not minutes; activities heartbeat
 * several times within it.
 */
export const DEFAULT_HEARTBEAT_SECONDS = 5;

/**
 * Seconds a workflow task waits for the worker that has the run cached before any worker may take it.
 * Temporal's default is 10 s, which is what a crashed worker costs every run it had cached; Keel's
 * workflow tasks are small and cheap to replay elsewhere, so it waits less.
 */
export const STICKY_QUEUE_TIMEOUT_SECONDS = 3;

/**
 * Most seconds between two heartbeats a worker sends for a running activity. A cancel reaches a tool
 * or model call with the next heartbeat, so this bounds cancel latency (Temporal would otherwise wait
 * 0.8 × the heartbeat timeout: 8 s at the default). Each heartbeat is one call to the server.
 */
export const DEFAULT_HEARTBEAT_INTERVAL_SECONDS = 2;

/** Extra seconds the tool activity gets beyond the tool's own timeout, so the executor reports the timeout. */
export const TOOL_ACTIVITY_GRACE_SECONDS = 15;

/** Instructions used when a run gives none. */
export const DEFAULT_INSTRUCTIONS =
  'You are Keel, a careful autonomous agent. Work step by step, use the available tools to inspect ' +
  'the workspace instead of guessing, and finish with a concise answer for the person who gave you the task.';

/** Allowed shape of a tool name, as the Responses API accepts it. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** Attempts at one model turn before the run fails (retryable errors only; 429s wait as asked). */
export const MODEL_MAX_ATTEMPTS = 8;

/** Attempts at one tool call lost to infrastructure (crashed worker, heartbeat timeout) before the run fails. */
export const TOOL_MAX_ATTEMPTS = 5;

/** Most recent events a run keeps in its state; older ones are in the workflow history. */
export const RUN_EVENTS_KEPT = 200;

/**
 * The signal a model turn's attempt after the first sends its run (for runs whose request asks with
 * `sayRetries`), so that the state query and the UI's current details say the turn is being tried
 * again while it is, not only once the retry answers.
 */
export const MODEL_ATTEMPT_SIGNAL = 'keel.modelAttempt';

/** Characters of a failed attempt's reason the run keeps. */
export const MODEL_ATTEMPT_REASON_CHARS = 300;

/** Invalid final answers sent back to the model with their problems, by default, before the run fails. */
export const DEFAULT_OUTPUT_RETRIES = 2;
/** The most output retries a run may ask for. */
export const MAX_OUTPUT_RETRIES = 5;

/** How deep sub-agents nest: a sub-agent's sub-agent is depth 2; a run at the limit offers none. */
export const MAX_SUB_AGENT_DEPTH = 3;
/** Sub-agent calls one turn may start; the model hears that the rest were not started. */
export const MAX_SUB_AGENT_CALLS_PER_TURN = 8;
/** Characters of a sub-agent's task. */
export const MAX_SUB_AGENT_TASK_CHARS = 20_000;
