import { webcrypto } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { codecKeysFromEnvironment } from '../../src/codec/codec-config.js';
import { CodecError } from '../../src/codec/codec-error.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import type { KeyRing } from '../../src/codec/key-ring.js';

const KEY_A = Buffer.alloc(32, 7).toString('base64');
const KEY_B = Buffer.alloc(32, 9).toString('base64');

function ring(active: string, keys: Record<string, string>): KeyRing {
  return {
    activeKeyId: active,
    keys: new Map(Object.entries(keys).map(([id, key]) => [id, Buffer.from(key, 'base64')])),
    source: 'the test',
  };
}

async function keysFile(text: string): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'keel-keys-')), 'keys');
  await writeFile(file, text);
  return file;
}

describe('EncryptionCodec', () => {
  it('encrypts the whole payload with the active key and a fresh IV, and decrypts it again', async () => {
    const codec = new EncryptionCodec(ring('k1', { k1: KEY_A }));
    const payload = defaultPayloadConverter.toPayload({ task: 'canary-7f3a secret plan' });
    const [first, second] = await codec.encode([payload, payload]);
    expect(Buffer.from(first!.metadata!.encoding!).toString()).toBe('binary/encrypted');
    expect(Buffer.from(first!.metadata!['encryption-key-id']!).toString()).toBe('k1');
    expect(Object.keys(first!.metadata!)).toEqual(['encoding', 'encryption-key-id']);
    expect(Buffer.from(first!.data!).toString('latin1')).not.toContain('canary-7f3a');
    expect(Buffer.from(first!.data!).subarray(0, 12)).not.toEqual(Buffer.from(second!.data!).subarray(0, 12));
    const [decoded] = await codec.decode([first!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ task: 'canary-7f3a secret plan' });
  });

  it("reads the format of Temporal's encryption samples (WebCrypto AES-GCM, IV first, the Payload protobuf inside)", async () => {
    const key = await webcrypto.subtle.importKey('raw', Buffer.from(KEY_A, 'base64'), 'AES-GCM', false, [
      'encrypt',
    ]);
    const iv = webcrypto.getRandomValues(new Uint8Array(12));
    const inner = proto.temporal.api.common.v1.Payload.encode(
      defaultPayloadConverter.toPayload('from another SDK'),
    ).finish();
    const sealed = new Uint8Array(
      await webcrypto.subtle.encrypt({ name: 'AES-GCM', iv, tagLength: 128 }, key, inner),
    );
    const foreign = {
      metadata: { encoding: Buffer.from('binary/encrypted'), 'encryption-key-id': Buffer.from('k1') },
      data: Buffer.concat([iv, sealed]),
    };
    const [decoded] = await new EncryptionCodec(ring('k1', { k1: KEY_A })).decode([foreign]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toBe('from another SDK');
  });

  it('decrypts with any listed key after a rotation, and leaves unencrypted payloads as they are', async () => {
    const old = await new EncryptionCodec(ring('k1', { k1: KEY_A })).encode([
      defaultPayloadConverter.toPayload(1),
    ]);
    const rotated = new EncryptionCodec(ring('k2', { k2: KEY_B, k1: KEY_A }));
    const plain = defaultPayloadConverter.toPayload('plain');
    const [fromOld, unchanged] = await rotated.decode([old[0]!, plain]);
    expect(defaultPayloadConverter.fromPayload(fromOld!)).toBe(1);
    expect(unchanged).toBe(plain);
    const [fresh] = await rotated.encode([plain]);
    expect(Buffer.from(fresh!.metadata!['encryption-key-id']!).toString()).toBe('k2');
  });

  it('refuses a payload of a key id it lacks, or a wrong key, naming the id and the setting but no key', async () => {
    const [sealed] = await new EncryptionCodec(ring('k9', { k9: KEY_A })).encode([
      defaultPayloadConverter.toPayload(1),
    ]);
    const lacking = new EncryptionCodec(ring('k1', { k1: KEY_B }));
    const missing = await lacking.decode([sealed!]).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(CodecError);
    expect((missing as Error).message).toBe(
      'A payload is encrypted with key id "k9", which the test does not list (it lists k1): add that key to decrypt it',
    );
    const wrong = new EncryptionCodec(ring('k9', { k9: KEY_B }));
    const message = ((await wrong.decode([sealed!]).catch((error: unknown) => error)) as Error).message;
    expect(message).toContain('does not decrypt with the key the test gives that id');
    expect(message).not.toContain(KEY_A);
    expect(message).not.toContain(KEY_B);
  });
});

describe('codec keys from the environment', () => {
  it('is off without settings, and takes one key with its id from KEEL_CODEC_KEY', () => {
    expect(codecKeysFromEnvironment({})).toBeUndefined();
    const keys = codecKeysFromEnvironment({ KEEL_CODEC_KEY: KEY_A, KEEL_CODEC_KEY_ID: '2026-12' });
    expect(keys?.activeKeyId).toBe('2026-12');
    expect(keys?.keys.get('2026-12')).toEqual(Buffer.from(KEY_A, 'base64'));
  });

  it('reads a keys file: the first key encrypts unless KEEL_CODEC_KEY_ID picks another, all decrypt', async () => {
    const file = await keysFile(`# rotated in December\nnew:${KEY_B}\n\nold:${KEY_A}\n`);
    const keys = codecKeysFromEnvironment({ KEEL_CODEC_KEYS_FILE: file });
    expect(keys?.activeKeyId).toBe('new');
    expect([...keys!.keys.keys()]).toEqual(['new', 'old']);
    expect(
      codecKeysFromEnvironment({ KEEL_CODEC_KEYS_FILE: file, KEEL_CODEC_KEY_ID: 'old' })?.activeKeyId,
    ).toBe('old');
  });

  it('says what is wrong with a setting, naming it, and never quotes a key', async () => {
    const short = Buffer.alloc(16, 1).toString('base64');
    const cases: Array<[NodeJS.ProcessEnv, string]> = [
      [{ KEEL_CODEC_KEY: KEY_A }, 'KEEL_CODEC_KEY needs KEEL_CODEC_KEY_ID'],
      [
        { KEEL_CODEC_KEY: short, KEEL_CODEC_KEY_ID: 'k' },
        'KEEL_CODEC_KEY must be a 32-byte AES-256 key in base64',
      ],
      [{ KEEL_CODEC_KEY: 'not base64!', KEEL_CODEC_KEY_ID: 'k' }, 'not text that is not base64'],
      [{ KEEL_CODEC_KEY: KEY_A, KEEL_CODEC_KEY_ID: 'a b' }, 'KEEL_CODEC_KEY_ID must be a key id'],
      [{ KEEL_CODEC_KEY_ID: 'k' }, 'KEEL_CODEC_KEY_ID is set, but no key'],
      [
        { KEEL_CODEC_KEYS_FILE: '/nonexistent/keys' },
        'KEEL_CODEC_KEYS_FILE is /nonexistent/keys, which cannot be read (ENOENT)',
      ],
      [{ KEEL_CODEC_KEYS_FILE: await keysFile(`k1:${short}\n`) }, 'line 1 must be a 32-byte AES-256 key'],
      [{ KEEL_CODEC_KEYS_FILE: await keysFile(`k1 ${KEY_A}\n`) }, 'line 1 must be `<key id>:<base64 key>`'],
      [
        { KEEL_CODEC_KEYS_FILE: await keysFile(`k1:${KEY_A}\nk1:${KEY_B}\n`) },
        'line 2 lists key id "k1" a second time',
      ],
      [{ KEEL_CODEC_KEYS_FILE: await keysFile('# none yet\n') }, 'lists no key'],
      [
        { KEEL_CODEC_KEYS_FILE: await keysFile(`k1:${KEY_A}\n`), KEEL_CODEC_KEY_ID: 'k2' },
        'KEEL_CODEC_KEY_ID is "k2", which KEEL_CODEC_KEYS_FILE',
      ],
      [
        { KEEL_CODEC_KEYS_FILE: '/x', KEEL_CODEC_KEY: KEY_A, KEEL_CODEC_KEY_ID: 'k' },
        'Set KEEL_CODEC_KEYS_FILE or KEEL_CODEC_KEY, not both',
      ],
    ];
    for (const [environment, expected] of cases) {
      let message = '';
      try {
        codecKeysFromEnvironment(environment);
      } catch (error) {
        expect((error as Error).name).toBe('ConfigError');
        message = (error as Error).message;
      }
      expect(message, JSON.stringify(environment)).toContain(expected);
      for (const key of [KEY_A, KEY_B, short]) expect(message).not.toContain(key);
    }
  });
});
