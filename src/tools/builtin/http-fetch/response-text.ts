import { TextDecoder } from 'node:util';
import { ToolError } from '../../tool-error.js';
import { htmlToText } from './html-to-text.js';
import type { Body } from './send-request.js';

/** How http_fetch treats a content type. */
export type ContentKind = 'html' | 'text' | 'binary' | 'unknown';

/** Media types outside `text/*` that are text all the same. */
const TEXT_TYPES = new Set([
  'application/json',
  'application/ld+json',
  'application/x-ndjson',
  'application/xml',
  'application/javascript',
  'application/ecmascript',
  'application/x-javascript',
  'application/x-www-form-urlencoded',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/graphql',
  'application/sql',
  'application/x-sh',
  'application/rss+xml',
  'application/atom+xml',
]);

/** The kind of a `Content-Type` header value; `unknown` when there is none. */
export function contentKind(contentType: string | undefined): ContentKind {
  const mime = mediaType(contentType);
  if (mime === '') return 'unknown';
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime.startsWith('text/') || TEXT_TYPES.has(mime) || mime.endsWith('+json') || mime.endsWith('+xml'))
    return 'text';
  return 'binary';
}

/** The lower-case media type of a `Content-Type` value, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return ((contentType ?? '').split(';')[0] ?? '').trim().toLowerCase();
}

/**
 * The text of a body: decoded by its declared charset (UTF-8 when none or unknown), HTML turned into
 * plain text. A body with NUL bytes in its first 8 KiB is binary whatever its type claims.
 */
export function bodyText(body: Body, contentType: string | undefined, kind: ContentKind): string {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase() ?? 'utf-8';
  const wide = charset.startsWith('utf-16');
  if (!wide && body.bytes.subarray(0, 8192).includes(0)) {
    throw new ToolError(
      `The response is binary (it contains NUL bytes)${kind === 'unknown' ? '' : ` although its Content-Type is ${mediaType(contentType)}`}; http_fetch returns text only`,
    );
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  // A body cut at the byte limit may end inside a character: stream mode leaves that piece out.
  const text = decoder.decode(body.bytes, { stream: body.truncated });
  return kind === 'html' ? htmlToText(text) : text;
}
