import { ConfigError } from '../config-error.js';

/** The keys a process encrypts and decrypts with: one active (encrypts), every listed one decrypts. */
export interface KeyRing {
  /** The id written into every payload this process encrypts. */
  activeKeyId: string;
  /** Every key by id, the active one included: 32 bytes each (AES-256). */
  keys: ReadonlyMap<string, Buffer>;
  /** Where the keys came from (a setting and file path), for errors that say what to fix. */
  source: string;
}

/** A key id: travels in clear in every payload's metadata, so it names a key and never derives from one. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/u;

/** Standard base64 (with or without padding), the form `openssl rand -base64 32` prints. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/u;

/** A 32-byte key from its base64 text; `where` names the setting (and line) in the error, which never quotes the key. */
export function decodeKey(text: string, where: string): Buffer {
  const trimmed = text.trim();
  const key = BASE64.test(trimmed) ? Buffer.from(trimmed, 'base64') : undefined;
  if (key === undefined || key.length !== 32) {
    throw new ConfigError(
      `${where} must be a 32-byte AES-256 key in base64 (44 characters; make one with ` +
        `\`openssl rand -base64 32\`), not ${key === undefined ? 'text that is not base64' : `${key.length} bytes`}`,
    );
  }
  return key;
}

/** A key id, checked; `where` names the setting in the error. */
export function checkKeyId(id: string, where: string): string {
  if (!KEY_ID_PATTERN.test(id)) {
    throw new ConfigError(
      `${where} must be a key id of 1 to 64 letters, digits, ".", "_" or "-" (it is stored in clear ` +
        `beside every payload), not ${JSON.stringify(id.length > 70 ? id.slice(0, 70) + '…' : id)}`,
    );
  }
  return id;
}

/**
 * The keys of a keys file: one `id:base64key` a line, `#` comments and blank lines ignored. The
 * first key encrypts unless `activeKeyId` names another; every key decrypts, so a key that
 * retires stays listed for as long as history encrypted with it is read.
 */
export function parseKeysFile(text: string, file: string, setting: string, activeKeyId?: string): KeyRing {
  const keys = new Map<string, Buffer>();
  const lines = text.split(/\r?\n/u);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const where = `${setting} (${file}) line ${index + 1}`;
    const colon = line.indexOf(':');
    if (colon === -1) throw new ConfigError(`${where} must be \`<key id>:<base64 key>\`, and has no ":"`);
    const id = checkKeyId(line.slice(0, colon).trim(), `The key id on ${where}`);
    if (keys.has(id)) throw new ConfigError(`${where} lists key id "${id}" a second time`);
    keys.set(id, decodeKey(line.slice(colon + 1), `The key on ${where}`));
  }
  const first = keys.keys().next();
  if (first.done) {
    throw new ConfigError(
      `${setting} (${file}) lists no key: write one \`<key id>:<base64 key>\` a line, e.g. ` +
        '`2026-12:` followed by the output of `openssl rand -base64 32`',
    );
  }
  const active = activeKeyId ?? first.value;
  if (!keys.has(active)) {
    throw new ConfigError(
      `KEEL_CODEC_KEY_ID is "${active}", which ${setting} (${file}) does not list (it lists ${[...keys.keys()].join(', ')})`,
    );
  }
  return { activeKeyId: active, keys, source: `${setting} (${file})` };
}
