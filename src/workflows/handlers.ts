import { log, setCurrentDetails, setDefaultSignalHandler, setHandler } from '@temporalio/workflow';
import { MAX_QUEUED_MESSAGES, QUEUED_MESSAGES_BYTES_LIMIT } from '../contract/defaults.js';
import { formatIssues } from '../contract/format-issues.js';
import { MODEL_ATTEMPT_SIGNAL } from '../contract/defaults.js';
import type { ModelAttempt } from '../contract/model-attempt.js';
import { jsonBytes } from '../contract/payload.js';
import type { RunInput } from '../contract/run-input.js';
import type { SendArgs } from '../contract/run-messages.js';
import type { RunState } from '../contract/run-state.js';
import type { Approvals } from './approvals.js';
import { check, checked } from './check.js';
import { asWorkflowFailure, invalidUpdate } from './failures.js';
import { MODEL_ATTEMPT, SEND_ARGS } from './input-plans.js';
import {
  approveSignal,
  approveUpdate,
  endSessionSignal,
  endSessionUpdate,
  modelAttemptSignal,
  rejectSignal,
  rejectUpdate,
  sendSignal,
  sendUpdate,
  stateQuery,
} from './messages.js';
import { currentDetails, recordRefusal } from './progress.js';

/** What the handlers of one run read and change. */
export interface Inbox {
  state: RunState;
  input: RunInput;
  approvals: Approvals;
  /** Messages that wait for the next turn; handlers append to it. */
  queue: string[];
  /** Asks a session to end. */
  endSession(): void;
}

/**
 * One message a client can send, as an update or as a signal: `check` throws the refusal (a
 * `KeelError.InvalidUpdate`), `apply` does it (with the first argument only: a replayed update was
 * checked by the validator of its time, which let further arguments through). Updates are refused before they are accepted; a signal
 * cannot be refused, so a signal that does not pass is recorded as a `refused` event instead.
 */
interface Message<Answer> {
  check(args: readonly unknown[]): void;
  apply(args: readonly unknown[]): Answer;
}

/**
 * Sets the state query and the handlers of every message a run takes. With `signals` (every run
 * since they exist; not while replaying older histories), `send`, `approve`, `reject` and
 * `endSession` also arrive as signals, for clients without updates, and any other signal is refused
 * visibly instead of being dropped. Unknown updates need no handler: Temporal refuses them to the caller.
 */
export function setMessageHandlers(inbox: Inbox, signals: boolean): void {
  const { state, approvals } = inbox;
  setHandler(stateQuery, () => state);

  const approve: Message<ReturnType<Approvals['approve']>> = {
    check: (args) => approvals.validateApprove(single(args)),
    apply: (args) => approvals.approve(args[0] as Parameters<Approvals['approve']>[0]),
  };
  const reject: Message<ReturnType<Approvals['reject']>> = {
    check: (args) => approvals.validateReject(single(args)),
    apply: (args) => approvals.reject(args[0] as Parameters<Approvals['reject']>[0]),
  };
  const send: Message<{ queued: number }> = {
    check: (args) => checkSend(single(args), inbox),
    apply: (args) => {
      inbox.queue.push(checked<SendArgs>(SEND_ARGS, args[0]).text);
      state.queuedMessages = inbox.queue.length;
      return { queued: inbox.queue.length };
    },
  };
  const endSession: Message<void> = {
    check: (args) => {
      none(args);
      if (!inbox.input.session) throw invalidUpdate('This run is not a session: cancel it to stop it.');
      if (state.result !== null) throw invalidUpdate('The session has already ended.');
    },
    apply: () => inbox.endSession(),
  };

  setHandler(approveUpdate, asUpdate('approve', approve), {
    validator: (...args) => approve.check(args),
    description: 'Let a call that waits for approval run, optionally with edited arguments.',
  });
  setHandler(rejectUpdate, asUpdate('reject', reject), {
    validator: (...args) => reject.check(args),
    description: 'Refuse a call that waits for approval; the model sees the reason.',
  });
  setHandler(sendUpdate, asUpdate('send', send), {
    validator: (...args) => send.check(args),
    description: 'Give the run a user message; it reaches the model at the next turn boundary.',
  });
  setHandler(endSessionUpdate, asUpdate('endSession', endSession), {
    validator: (...args) => endSession.check(args),
    description: 'End a session once it has answered (it ends at once when idle).',
  });
  // Sent by a model turn's retry (requests ask for it with `sayRetries`), in runs of every age.
  setHandler(modelAttemptSignal, (...args: unknown[]) => noteModelAttempt(inbox, args), {
    description: "Sent by a model turn's attempt after the first: the state and current details say it.",
  });
  if (!signals) return;

  const asSignal =
    (name: string, message: Message<unknown>) =>
    (...args: unknown[]): void => {
      try {
        message.check(args);
        message.apply(args);
      } catch (error) {
        refuse(inbox, name, error instanceof Error ? error.message : String(error));
      }
    };
  setHandler(approveSignal, asSignal('approve', approve), {
    description: 'As the approve update, for clients without updates; a refusal is a `refused` event.',
  });
  setHandler(rejectSignal, asSignal('reject', reject), {
    description: 'As the reject update, for clients without updates; a refusal is a `refused` event.',
  });
  setHandler(sendSignal, asSignal('send', send), {
    description: 'As the send update, for clients without updates; a refusal is a `refused` event.',
  });
  setHandler(endSessionSignal, asSignal('endSession', endSession), {
    description: 'As the endSession update, for clients without updates; a refusal is a `refused` event.',
  });
  setDefaultSignalHandler((name) => refuse(inbox, name, unknownSignal(name)));
}

/** An update handler: its validator let it through, so only a bug of Keel's can make it throw. */
function asUpdate<Answer>(name: string, message: Message<Answer>) {
  return (...args: unknown[]): Answer => {
    try {
      return message.apply(args);
    } catch (error) {
      // A plain error here would fail the workflow task and retry it for ever; this fails the update.
      throw asWorkflowFailure(error, `${name} update`);
    }
  };
}

/**
 * A retry of the current model turn: the state and the current details say so until the turn ends.
 * One for another turn (it ended meanwhile) is old news and changes nothing.
 */
function noteModelAttempt(inbox: Inbox, args: readonly unknown[]): void {
  const parsed = check<ModelAttempt>(MODEL_ATTEMPT, args[0]);
  if (!parsed.success) {
    refuse(inbox, MODEL_ATTEMPT_SIGNAL, formatIssues(parsed).join('; '));
    return;
  }
  const { state, input } = inbox;
  if (state.phase !== 'thinking' || parsed.data.turn !== state.turn) return;
  state.modelAttempt = parsed.data;
  setCurrentDetails(currentDetails(state, input.task));
}

function refuse({ state, input }: Inbox, signal: string, reason: string): void {
  log.warn('Refused a signal', { signal, reason });
  recordRefusal(state, signal, reason);
  setCurrentDetails(currentDetails(state, input.task));
}

function unknownSignal(name: string): string {
  const cancel = /cancel|stop|abort|terminate|kill/i.test(name)
    ? ' To stop a run, cancel the workflow (`temporal workflow cancel`, `handle.cancel()`).'
    : '';
  return `Keel runs take the signals (and updates) send, approve, reject and endSession; this one was ignored.${cancel}`;
}

/** The one argument of a message; `null` or absent arguments after it are harmless. */
function single(args: readonly unknown[]): unknown {
  if (args.slice(1).some((arg) => arg !== undefined && arg !== null)) {
    throw invalidUpdate(`Takes one argument, an object, but got ${args.length}.`);
  }
  return args[0];
}

function none(args: readonly unknown[]): void {
  if (args.some((arg) => arg !== undefined && arg !== null)) {
    throw invalidUpdate(`Takes no argument, but got ${args.length}.`);
  }
}

function checkSend(raw: unknown, inbox: Inbox): void {
  const parsed = check<SendArgs>(SEND_ARGS, raw);
  if (!parsed.success) throw invalidUpdate(`Invalid message:\n${formatIssues(parsed).join('\n')}`);
  if (inbox.state.result !== null) {
    throw invalidUpdate('The run has ended; start a new run (or a session, which stays open for messages).');
  }
  if (inbox.queue.length >= MAX_QUEUED_MESSAGES) {
    throw invalidUpdate(
      `${MAX_QUEUED_MESSAGES} messages already wait for the next turn; send again after it.`,
    );
  }
  if (jsonBytes(inbox.queue) + jsonBytes(parsed.data.text) > QUEUED_MESSAGES_BYTES_LIMIT) {
    throw invalidUpdate(
      `The messages waiting for the next turn would exceed ${QUEUED_MESSAGES_BYTES_LIMIT} bytes; send again after it.`,
    );
  }
}
