import { isSecretName, secretsInValue } from './secret-names.js';
import { secretForms } from './secret-forms.js';
import type { SecretForm } from './secret-forms.js';
import { withoutStackFrames } from './stack-frames.js';

/** Shapes of well-known credentials, redacted from error messages even when nobody named them. */
const SECRET_SHAPES: RegExp[] = [
  /\bsk-[A-Za-z0-9_*.-]{6,}/g, // OpenAI-style keys, including the masked forms in 401 messages
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

/** What a secret is replaced by. */
export const REDACTED = '[redacted]';

/**
 * The secrets in an environment: the values of variables whose names say they hold credentials (see
 * `isSecretName`: `API_KEY2`, `DB_PASSWORDS`, `AUTHORIZATION`, …), each line of a multi-line one (a PEM
 * key), and, from any variable, a password inside a URL or a connection string (`DATABASE_URL`).
 * Length floors are the sanitizer's business (see `secretForms`), so short values are returned too.
 */
export function secretsFromEnvironment(environment: NodeJS.ProcessEnv = process.env): string[] {
  const secrets: string[] = [];
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined || value === '') continue;
    if (isSecretName(name)) {
      secrets.push(value);
      if (value.includes('\n')) {
        for (const line of value.split(/\r?\n/)) {
          // A PEM armour line (`-----BEGIN …`) is the same in everyone's key.
          if (!line.trim().startsWith('-----')) secrets.push(line.trim());
        }
      }
    }
    secrets.push(...secretsInValue(value));
  }
  return [...new Set(secrets)].filter((secret) => secret !== '');
}

/** Options for {@link createSanitizer}. */
export interface SanitizerOptions {
  /** Exact values to redact wherever they appear, in each of their plausible encodings. */
  secrets?: readonly string[];
  /** Absolute paths to hide, each replaced by its label (the workspace root by `.`, say). */
  paths?: readonly { path: string; label: string }[];
  /** Longest message returned by {@link Sanitizer.message}; the rest is cut with a marker. */
  maxMessageLength?: number;
}

/** Cleans text before it leaves the worker for the model or for workflow history. */
export interface Sanitizer {
  /** Removes the secrets; for tool and model output, whose other content is the model's business. */
  output(text: string): string;
  /** For error messages: secrets, stack frames, credential shapes and worker paths removed, length bounded. */
  message(text: string): string;
  /**
   * The start of {@link output}`(text)`, at most `length` characters, redacting only a window a little
   * longer than that: for previews of huge output. It may come out shorter when redaction shrank it.
   */
  head(text: string, length: number): string;
  /** {@link output} applied to every string (and object key) inside plain JSON-like data; other values kept. */
  value<T>(value: T): T;
  /** Length of the longest end of `text` that begins a secret: what a growing (streamed) text must hold back. */
  unsettled(text: string): number;
}

/** Builds a {@link Sanitizer}. */
export function createSanitizer(options: SanitizerOptions = {}): Sanitizer {
  const forms = uniqueForms((options.secrets ?? []).flatMap(secretForms));
  const paths = [...(options.paths ?? [])]
    .filter((entry) => entry.path.length > 1)
    .sort((a, b) => b.path.length - a.path.length);
  const maxLength = options.maxMessageLength ?? 2_000;
  // One pass of a compiled alternation finds out whether any form is there at all, an order of
  // magnitude faster than a search per form; the exact (and slower) redaction runs only when one is.
  const detector =
    forms.length === 0
      ? undefined
      : new RegExp(
          forms
            .map((form) => form.text)
            .sort((a, b) => b.length - a.length)
            .map((text) => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'))
            .join('|'),
        );
  const output = (text: string): string =>
    detector === undefined || !detector.test(text) ? text : redact(text, forms);
  const value = <T>(data: T): T => redactValue(data, output) as T;
  // A secret cut by the window's end stays partly unredacted in the window's last characters: at most
  // its longest form, grown by the markers of shorter secrets inside it. Those are dropped.
  const margin = 3 * Math.max(0, ...forms.map((form) => form.text.length));
  return {
    output,
    value,
    unsettled(text) {
      let longest = 0;
      for (const form of forms) {
        for (let length = Math.min(form.text.length - 1, text.length); length > longest; length--) {
          if (text.endsWith(form.text.slice(0, length))) {
            longest = length;
            break;
          }
        }
      }
      return longest;
    },
    head(text, length) {
      if (text.length <= length + 3 * margin) return output(text).slice(0, length);
      // One margin to drop, one for what redaction before the cut may take away.
      const redacted = output(text.slice(0, length + 2 * margin));
      return redacted.slice(0, Math.max(0, Math.min(length, redacted.length - margin)));
    },
    message(text) {
      let result = output(withoutStackFrames(text));
      for (const shape of SECRET_SHAPES) result = result.replace(shape, REDACTED);
      for (const { path, label } of paths) {
        result = result.split(path + '/').join(label === '' ? '' : label + '/');
        result = result.split(path).join(label);
      }
      return result.length > maxLength ? result.slice(0, maxLength) + '… [truncated]' : result;
    },
  };
}

/** One form per text; when one secret's form counts only as a whole word and another's anywhere, anywhere wins. */
function uniqueForms(forms: readonly SecretForm[]): SecretForm[] {
  const byText = new Map<string, SecretForm>();
  for (const form of forms) {
    const seen = byText.get(form.text);
    if (seen === undefined || (seen.wholeWord && !form.wholeWord)) byText.set(form.text, form);
  }
  return [...byText.values()];
}

const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/**
 * The text with every occurrence of every form replaced. Occurrences are collected first and merged
 * where they overlap, so two secrets that share characters are both hidden whole. Forms found
 * anywhere go first: a short secret right next to one of them (`<long secret>hunt3r`) is still a
 * whole word, since the redacted neighbour is no part of it.
 */
function redact(text: string, forms: readonly SecretForm[]): string {
  const anywhere = merged(occurrences(text, forms, false));
  const words = occurrences(text, forms, true).filter(
    ([start, end]) => !isWordAt(text, start - 1, anywhere) && !isWordAt(text, end, anywhere),
  );
  const spans = merged([...anywhere, ...words]);
  if (spans.length === 0) return text;
  let result = '';
  let copied = 0;
  for (const [start, end] of spans) {
    result += text.slice(copied, start) + REDACTED;
    copied = end;
  }
  return result + text.slice(copied);
}

type Span = [start: number, end: number];

/** Every occurrence, overlapping ones included, of the forms that must (or need not) be whole words. */
function occurrences(text: string, forms: readonly SecretForm[], wholeWord: boolean): Span[] {
  const spans: Span[] = [];
  for (const form of forms) {
    if (form.wholeWord !== wholeWord) continue;
    for (let at = text.indexOf(form.text); at !== -1; at = text.indexOf(form.text, at + 1))
      spans.push([at, at + form.text.length]);
  }
  return spans;
}

/** The spans sorted, with overlapping or touching ones joined. */
function merged(spans: Span[]): Span[] {
  spans.sort((a, b) => a[0] - b[0]);
  const result: Span[] = [];
  for (const span of spans) {
    const last = result.at(-1);
    if (last !== undefined && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
    else result.push([span[0], span[1]]);
  }
  return result;
}

/** Whether a letter or digit of the text, outside the (sorted, disjoint) redacted spans, is at `index`. */
function isWordAt(text: string, index: number, redacted: readonly Span[]): boolean {
  if (index < 0 || index >= text.length || !WORD_CHARACTER.test(text[index]!)) return false;
  let low = 0;
  let high = redacted.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const [start, end] = redacted[middle]!;
    if (index < start) high = middle - 1;
    else if (index >= end) low = middle + 1;
    else return false;
  }
  return true;
}

/**
 * `data` with every string and key redacted; other objects pass as they are. A cycle becomes
 * `[cycle]` rather than a way back to the unredacted original (`ancestors`: the objects above).
 */
function redactValue(
  data: unknown,
  output: (text: string) => string,
  ancestors = new Set<object>(),
): unknown {
  if (typeof data === 'string') return output(data);
  if (data === null || typeof data !== 'object') return data;
  if (ancestors.has(data)) return '[cycle]';
  const prototype = Object.getPrototypeOf(data) as unknown;
  if (!Array.isArray(data) && prototype !== Object.prototype && prototype !== null) return data;
  ancestors.add(data);
  try {
    if (Array.isArray(data)) return data.map((item) => redactValue(item, output, ancestors));
    return Object.fromEntries(
      Object.entries(data).map(([key, item]) => [output(key), redactValue(item, output, ancestors)]),
    );
  } finally {
    ancestors.delete(data);
  }
}
