import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat-completions request as the upstream received it. */
export interface ChatRequest {
  index: number;
  /** Pieces of a streamed text answer written so far. */
  piecesSent: number;
  /** How its answer ended: written whole, or its connection closed before that (`closedEarly`). */
  ended?: 'whole' | 'closedEarly';
  body: {
    model: string;
    stream?: boolean;
    messages: Array<{ role: string; content?: unknown; tool_calls?: unknown[]; tool_call_id?: string }>;
    tools?: unknown[];
  };
}

/** What the upstream answers one request with. */
export type ChatAnswer =
  /** Text; streamed in 8-character pieces, `pieceMs` apart when set (a model writing at its pace). */
  | { text: string; pieceMs?: number }
  | { calls: Array<{ name: string; arguments: Record<string, unknown> }> }
  | { status: number; message: string; headers?: Record<string, string> };

/**
 * A scripted OpenAI chat-completions server on loopback: the upstream that a gateway such as
 * LiteLLM turns Keel's Responses requests into. It answers each request from a policy, as JSON or,
 * when asked, as a stream of chunks, and records every request.
 */
export class ChatCompletionsModel {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    /** Every request, in arrival order. */
    readonly requests: ChatRequest[],
  ) {}

  static async start(policy: (request: ChatRequest) => ChatAnswer): Promise<ChatCompletionsModel> {
    const requests: ChatRequest[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }));
          return;
        }
        const recorded: ChatRequest = {
          index: requests.length,
          piecesSent: 0,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest['body'],
        };
        requests.push(recorded);
        const answer = policy(recorded);
        if ('status' in answer) {
          response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
          response.end(JSON.stringify({ error: { message: answer.message, type: 'server_error' } }));
          return;
        }
        const id = `chatcmpl-${recorded.index + 1}`;
        const message =
          'text' in answer
            ? { role: 'assistant', content: answer.text }
            : {
                role: 'assistant',
                content: null,
                tool_calls: answer.calls.map((call, position) => ({
                  id: `call_${recorded.index + 1}_${position + 1}`,
                  type: 'function',
                  function: { name: call.name, arguments: JSON.stringify(call.arguments) },
                })),
              };
        const finish = 'text' in answer ? 'stop' : 'tool_calls';
        const usage = {
          prompt_tokens: 50 + recorded.index,
          completion_tokens: 7,
          total_tokens: 57 + recorded.index,
        };
        const base = { id, created: 1_700_000_000, model: recorded.body.model };
        if (recorded.body.stream !== true) {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({
              ...base,
              object: 'chat.completion',
              choices: [{ index: 0, message, finish_reason: finish }],
              usage,
            }),
          );
          return;
        }
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.once('close', () => (recorded.ended ??= 'closedEarly'));
        const chunk = (delta: unknown, finishReason: string | null, extra: object = {}): void => {
          response.write(
            `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`,
          );
        };
        const finishAnswer = (): void => {
          chunk({}, finish, { usage });
          recorded.ended = 'whole';
          response.end('data: [DONE]\n\n');
        };
        if ('text' in answer) {
          chunk({ role: 'assistant', content: '' }, null);
          // The text in a few pieces, as a model streams it.
          const pieces = answer.text.match(/.{1,8}/gsu) ?? [];
          if (answer.pieceMs !== undefined) {
            const next = (): void => {
              if (recorded.ended !== undefined) return;
              const piece = pieces[recorded.piecesSent];
              if (piece === undefined) return finishAnswer();
              chunk({ content: piece }, null);
              recorded.piecesSent += 1;
              setTimeout(next, answer.pieceMs);
            };
            next();
            return;
          }
          for (const piece of pieces) chunk({ content: piece }, null);
          recorded.piecesSent = pieces.length;
        } else {
          chunk(
            {
              role: 'assistant',
              tool_calls: message.tool_calls!.map((call, index) => ({ index, ...call })),
            },
            null,
          );
        }
        finishAnswer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return new ChatCompletionsModel(server, `http://127.0.0.1:${port}/v1`, requests);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
