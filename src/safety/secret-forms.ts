/** Shortest secret redacted wherever it appears; shorter ones only as a whole word (see {@link secretForms}). */
export const SUBSTRING_SECRET_LENGTH = 8;

/** Shortest secret redacted at all: anything shorter (`1`, `on`) would match all over ordinary text. */
export const MIN_SECRET_LENGTH = 4;

/** Values too common to be anyone's secret; redacting them would wreck every JSON document. */
const COMMON_VALUES = new Set([
  'true',
  'false',
  'null',
  'none',
  'nil',
  'undefined',
  'yes',
  'enabled',
  'disabled',
  'default',
  'localhost',
]);

/** One way a secret can be written, and whether it counts only as a whole word. */
export interface SecretForm {
  text: string;
  wholeWord: boolean;
}

/** The secret inside a JSON string literal, as `JSON.stringify` writes it (`"` → `\"`, `\` → `\\`). */
function jsonEscaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** The same, with every non-ASCII character as `\uXXXX`, as Python's `json.dumps` writes it. */
function jsonAsciiEscaped(text: string): string {
  return jsonEscaped(text).replace(
    /[\u0080-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The parts of base64 text that are the same wherever the secret sits in a longer encoded string
 * (`Basic dXNlcjpodW50ZXIy` encodes `user:` before the password): one per byte alignment, without
 * the characters the neighbouring bytes share.
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset += 1) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    const start = offset === 0 ? 0 : Math.ceil((offset * 4) / 3);
    // A character is the secret's own when all six of its bits are; the last one may share bits with what follows.
    const end = Math.floor((padded.length * 8) / 6);
    const core = encoded.slice(start, end);
    if (core.length >= SUBSTRING_SECRET_LENGTH)
      cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

/**
 * The forms in which a secret can appear in text a tool or the model writes: as it is, JSON-escaped
 * (once, twice, ASCII-only), URL-encoded (`%XX`, `+` for spaces, lower-case hex) and, for secrets of
 * {@link SUBSTRING_SECRET_LENGTH} characters or more, base64 (any alignment, URL-safe too) and hex.
 * A secret shorter than that counts only as a whole word (no letter or digit right before or after),
 * so a 6-character password is caught in `pw=hunter` but not inside `hunters`; one under
 * {@link MIN_SECRET_LENGTH} characters, or a word like `true`, is not a secret at all. An encoding
 * the text invents itself (reversed, split, ROT13) is beyond any redaction.
 */
export function secretForms(secret: string): SecretForm[] {
  if (secret.length < MIN_SECRET_LENGTH || COMMON_VALUES.has(secret.toLowerCase())) return [];
  const wholeWord = secret.length < SUBSTRING_SECRET_LENGTH;
  const texts = new Set<string>([secret, jsonEscaped(secret), jsonEscaped(jsonEscaped(secret))]);
  texts.add(jsonAsciiEscaped(secret));
  const encoded = encodeURIComponent(secret);
  texts.add(encoded);
  texts.add(encoded.replace(/%20/g, '+'));
  texts.add(encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()));
  texts.add(encodeURI(secret));
  if (!wholeWord) {
    const bytes = Buffer.from(secret, 'utf8');
    for (const core of base64Cores(bytes)) texts.add(core);
    texts.add(bytes.toString('hex'));
    texts.add(bytes.toString('hex').toUpperCase());
  }
  return [...texts].map((text) => ({ text, wholeWord }));
}
