import type { ModelInput } from '../contract/model-request.js';
import type { NextInput } from './schemas.js';
import { recordMessage } from './progress.js';
import type { RunContext } from './run-context.js';

/** The model input of the next turn, with the messages that arrived meanwhile (which it takes from the queue). */
export function modelInputFor(run: RunContext, next: Exclude<NextInput, { kind: 'idle' }>): ModelInput {
  const { input, state, conversation } = run;
  const messages = run.queue.splice(0);
  state.queuedMessages = 0;
  for (const text of messages) recordMessage(state, text);
  const withMessages = messages.length > 0 ? { messages } : {};
  if (conversation !== null) {
    if (next.kind === 'task') conversation.addUserMessage(input.task);
    if (next.kind === 'observations') conversation.addObservations(next.observations);
    for (const text of messages) conversation.addUserMessage(text);
    return { kind: 'items', items: conversation.items(run.observationBudget) };
  }
  switch (next.kind) {
    case 'task':
      return { kind: 'task', task: input.task, ...withMessages };
    case 'observations':
      return { ...next, ...withMessages };
    case 'messages':
      if (next.previousResponseId === null) return { kind: 'task', task: input.task, messages };
      return { kind: 'messages', previousResponseId: next.previousResponseId, messages };
  }
}
