import type {
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
} from 'openai/resources/responses/responses';
import { observationText } from '../contract/observation.js';
import type { ConversationItem, ModelInput, ModelRequest } from '../contract/model-request.js';
import { STRICT_UNSUPPORTED } from '../tools/strict-schema.js';
import type { FunctionToolParam } from './responses-tools.js';

/**
 * The Responses API request for one turn. Turn one sends the task; later turns chain with
 * `previous_response_id` and send exactly one `function_call_output` per `call_id`, in call order,
 * then any user messages. A stateless run sends its whole conversation with `store: false` and asks
 * for reasoning as encrypted content, so it can send that back too.
 */
export function buildResponsesRequest(
  request: ModelRequest,
  tools: readonly FunctionToolParam[],
): ResponseCreateParamsNonStreaming {
  const stateless = request.input.kind === 'items';
  const previousResponseId =
    request.input.kind === 'observations' || request.input.kind === 'messages'
      ? request.input.previousResponseId
      : undefined;
  return {
    model: request.model,
    instructions: request.instructions,
    input: inputItems(request.input),
    ...(previousResponseId !== undefined ? { previous_response_id: previousResponseId } : {}),
    ...(tools.length > 0
      ? { tools: [...tools], tool_choice: 'auto' as const, parallel_tool_calls: request.parallelToolCalls }
      : {}),
    ...(request.maxOutputTokens !== undefined ? { max_output_tokens: request.maxOutputTokens } : {}),
    ...(request.reasoningEffort !== undefined ? { reasoning: { effort: request.reasoningEffort } } : {}),
    ...(request.truncation !== undefined ? { truncation: request.truncation } : {}),
    ...(request.output !== undefined
      ? {
          text: {
            format: {
              type: 'json_schema' as const,
              name: request.output.name,
              schema: request.output.schema,
              strict: request.output.strict ?? strictAsGiven(request.output.schema),
            },
          },
        }
      : {}),
    ...(stateless ? { store: false, include: ['reasoning.encrypted_content' as const] } : { store: true }),
  };
}

/**
 * Whether a schema is one strict structured outputs take as it is: every sub-schema says what it
 * is (`type`, `anyOf`, `enum`, `const` or a `$ref`), every object is closed
 * (`additionalProperties: false`) with all its properties required, and no keyword strict mode
 * refuses (`default` among them). An optional property (`.optional()` in zod) or an unknown value
 * (`z.unknown()`) makes it non-strict; `.nullable()` keeps it strict. Walks the schema by its
 * structure, so a property named `default` or `enum` is a property like any other.
 */
export function strictAsGiven(schema: unknown): boolean {
  if (!isRecord(schema)) return false;
  if ([...STRICT_UNSUPPORTED, 'default'].some((keyword) => keyword in schema)) return false;
  if (!['type', 'anyOf', 'enum', 'const', '$ref'].some((keyword) => keyword in schema)) return false;
  const subSchemas: unknown[] = [];
  if (schema.type === 'object' || 'properties' in schema) {
    if (schema.additionalProperties !== false) return false;
    const properties = isRecord(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required : [];
    if (!Object.keys(properties).every((name) => required.includes(name))) return false;
    subSchemas.push(...Object.values(properties));
  }
  if ('items' in schema) subSchemas.push(schema.items);
  if (Array.isArray(schema.anyOf)) subSchemas.push(...(schema.anyOf as unknown[]));
  for (const key of ['$defs', 'definitions'] as const)
    if (isRecord(schema[key])) subSchemas.push(...Object.values(schema[key]));
  return subSchemas.every(strictAsGiven);
}

function inputItems(input: ModelInput): ResponseInputItem[] {
  const user = (text: string): ResponseInputItem => ({ type: 'message', role: 'user', content: text });
  switch (input.kind) {
    case 'task':
      return [user(input.task), ...(input.messages ?? []).map(user)];
    case 'observations':
      return [
        ...input.observations.map((observation): ResponseInputItem => ({
          type: 'function_call_output',
          call_id: observation.callId,
          output: observationText(observation),
        })),
        ...(input.messages ?? []).map(user),
      ];
    case 'messages':
      return input.messages.map(user);
    case 'items':
      // Items the Responses API produced or Keel built in its own shape, completed where needed.
      return input.items.map(asValidInputItem) as unknown as ResponseInputItem[];
  }
}

/**
 * A conversation item as OpenAI's published schema requires it as input. The model's own messages
 * come back from the output as `OutputMessage` items, which require `status` and, on each text part,
 * `annotations` and `logprobs`. Older runs recorded them without `status`, and Responses-compatible
 * servers may leave the others out: an item without them is completed here rather than refused by
 * the API. Everything else is sent as it was recorded.
 */
function asValidInputItem(item: ConversationItem): ConversationItem {
  if (item.type !== 'message' || item.role !== 'assistant' || !Array.isArray(item.content)) return item;
  return {
    ...item,
    status: item.status ?? 'completed',
    content: item.content.map((part: unknown) =>
      isRecord(part) && part.type === 'output_text'
        ? { ...part, annotations: part.annotations ?? [], logprobs: part.logprobs ?? [] }
        : part,
    ),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
