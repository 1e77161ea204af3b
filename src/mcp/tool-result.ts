import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';

/**
 * The text the model sees for an MCP tool result: text blocks as written, one line for each image,
 * audio clip or linked resource (their bytes are not sent on), an embedded text resource's text, and
 * the structured content as JSON when there are no content blocks. A result from a server on the
 * 2024 protocol (`toolResult`) is shown as JSON.
 */
export function toolResultText(result: CallToolResult | { toolResult: unknown }): string {
  if ('toolResult' in result) return JSON.stringify(result.toolResult) ?? 'null';
  const blocks = result.content;
  if (blocks.length === 0) {
    return result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent);
  }
  return blocks.map(describeBlock).join('\n');
}

function describeBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
    case 'resource_link':
      return `[resource link: ${block.name} <${block.uri}>${block.mimeType === undefined ? '' : ` (${block.mimeType})`}]`;
    case 'resource': {
      const resource = block.resource;
      const type = resource.mimeType === undefined ? '' : ` (${resource.mimeType})`;
      return 'text' in resource
        ? `[resource <${resource.uri}>${type}]\n${resource.text}`
        : `[resource <${resource.uri}>${type}: ${base64Bytes(resource.blob)} bytes, not shown]`;
    }
    default:
      return `[content of type ${JSON.stringify((block as { type: unknown }).type)}, not shown]`;
  }
}

/** Bytes a base64 string decodes to, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
