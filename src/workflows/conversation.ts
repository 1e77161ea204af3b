import { ApplicationFailure } from '@temporalio/workflow';
import type { ConversationItem } from '../contract/conversation-item.js';
import type { Observation } from '../contract/observation.js';
import { observationText } from '../contract/observation-text.js';
import { jsonBytes } from '../contract/payload.js';
import type { ConversationSnapshot } from './schemas.js';

/**
 * The conversation of a stateless run (`store: false`): every item the model needs, kept in the
 * workflow and sent whole each turn. Compaction drops the oldest whole turns (never the task, never
 * the current turn), so a call and its result are always dropped together.
 */
export class Conversation {
  private readonly groups: ConversationItem[][];
  private omittedTurns: number;

  constructor(snapshot?: ConversationSnapshot) {
    this.groups = snapshot?.groups.map((group) => [...group]) ?? [];
    this.omittedTurns = snapshot?.omittedTurns ?? 0;
  }

  addUserMessage(text: string): void {
    const item: ConversationItem = { type: 'message', role: 'user', content: text };
    if (this.groups.length === 0) this.groups.push([item]);
    else this.groups.at(-1)!.push(item);
  }

  addTurnOutput(items: readonly ConversationItem[]): void {
    this.groups.push([...items]);
  }

  addObservations(observations: readonly Observation[]): void {
    const group = this.groups.at(-1);
    if (group === undefined) return;
    for (const observation of observations) {
      group.push({
        type: 'function_call_output',
        call_id: observation.callId,
        output: observationText(observation),
      });
    }
  }

  /** The items to send, after dropping old turns until they fit in `budgetBytes`. */
  items(budgetBytes: number): ConversationItem[] {
    this.compact(budgetBytes);
    const [first = [], ...rest] = this.groups;
    const note: ConversationItem[] =
      this.omittedTurns > 0
        ? [
            {
              type: 'message',
              role: 'developer',
              content: `[${this.omittedTurns} earlier turn(s) of this conversation were dropped to keep it within its size limit.]`,
            },
          ]
        : [];
    return [...first, ...note, ...rest.flat()];
  }

  /** A copy to carry across continue-as-new, compacted to `budgetBytes`. */
  snapshot(budgetBytes: number): ConversationSnapshot {
    this.compact(budgetBytes);
    return { groups: this.groups.map((group) => [...group]), omittedTurns: this.omittedTurns };
  }

  private compact(budgetBytes: number): void {
    // Measured once, then less each dropped group and its comma: not the whole conversation again per turn dropped.
    let bytes = jsonBytes(this.groups);
    while (bytes > budgetBytes && this.groups.length > 2) {
      const [dropped] = this.groups.splice(1, 1);
      bytes -= jsonBytes(dropped) + 1;
      this.omittedTurns += 1;
    }
    if (bytes > budgetBytes) {
      throw ApplicationFailure.create({
        type: 'KeelError.PayloadTooLarge',
        message:
          `The conversation is ${bytes} bytes even with every earlier turn dropped, over the ` +
          `${budgetBytes} bytes a stateless run may send in one turn. Shorten the task or the tool outputs.`,
        nonRetryable: true,
      });
    }
  }
}
