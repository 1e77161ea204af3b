import { Context } from '@temporalio/activity';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import OpenAI from 'openai';
import { turnRequest } from '../support/streaming-model.js';
import { EVENTS_TOPIC } from './events.js';
import type { StreamedEvent, StreamTurnInput } from './events.js';

/** What the activities talk to. */
export interface StreamActivitiesDependencies {
  modelUrl: string;
}

/** The comparison's activities: a streamed model turn that publishes through workflow-streams, and the no-op tool. */
export function createStreamActivities({ modelUrl }: StreamActivitiesDependencies) {
  const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: modelUrl });
  return {
    /** Streams one model turn, publishing each text delta (and a call start at once); returns its characters. */
    async streamTurn(input: StreamTurnInput): Promise<number> {
      const client = WorkflowStreamClient.fromWithinActivity({ batchInterval: input.batchMs });
      const events = client.topic<StreamedEvent>(EVENTS_TOPIC);
      let characters = 0;
      try {
        const response = await openai.responses.create({
          model: 'bench-model',
          input: [{ role: 'user', content: turnRequest(input.runKey, input.turns, input.turn) }],
          stream: true,
        });
        for await (const event of response) {
          if (event.type === 'response.output_text.delta') {
            characters += event.delta.length;
            events.publish({ type: 'text', turn: input.turn, delta: event.delta });
            Context.current().heartbeat();
          } else if (event.type === 'response.output_item.added' && event.item.type === 'function_call') {
            const call = {
              type: 'tool_call',
              turn: input.turn,
              callId: event.item.call_id,
              name: event.item.name,
            };
            events.publish(call as StreamedEvent, { forceFlush: true });
          }
        }
      } finally {
        // Flushes what is buffered: the turn's events are in the workflow before its result.
        await client[Symbol.asyncDispose]();
      }
      return characters;
    },
    /** The benchmark's no-op tool. */
    noop({ size }: { size: number }): Promise<string> {
      return Promise.resolve('x'.repeat(size));
    },
  };
}
