import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { METADATA_ENCODING_KEY } from '@temporalio/common';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { CodecError } from './codec-error.js';
import type { KeyRing } from './key-ring.js';

/**
 * The wire format, shared with Temporal's encryption samples (TypeScript, Go, Python, .NET) so any
 * SDK can read Keel's payloads: the metadata says `encoding: binary/encrypted` and
 * `encryption-key-id: <id>`; the data is a 12-byte random IV, then the AES-256-GCM ciphertext of the
 * whole original `Payload` protobuf (its metadata too), then the 16-byte tag; no associated data.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata key holding the id of the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

// @temporalio/proto is CommonJS with a computed export: take it from the default export under ESM.
const Proto = proto.temporal.api.common.v1.Payload;

/** AES-256-GCM payload codec with key ids: encrypts with the active key, decrypts with any listed one. */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly ring: KeyRing) {}

  /** The id new payloads are encrypted with. */
  get activeKeyId(): string {
    return this.ring.activeKeyId;
  }

  encode(payloads: Payload[]): Promise<Payload[]> {
    const key = this.ring.keys.get(this.ring.activeKeyId)!;
    return Promise.resolve(
      payloads.map((payload) => {
        const iv = randomBytes(IV_BYTES);
        const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
        const plain = Proto.encode(payload).finish();
        const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
        return {
          metadata: {
            [METADATA_ENCODING_KEY]: Buffer.from(ENCRYPTED_ENCODING),
            [KEY_ID_METADATA]: Buffer.from(this.ring.activeKeyId),
          },
          data,
        };
      }),
    );
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- async, so a refusal rejects rather than throws
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decodeOne(payload));
  }

  /** A payload decrypted; one that is not encrypted (older history, a search attribute) as it is. */
  private decodeOne(payload: Payload): Payload {
    const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
    if (
      encoding === undefined ||
      encoding === null ||
      Buffer.from(encoding).toString() !== ENCRYPTED_ENCODING
    )
      return payload;
    const idBytes = payload.metadata?.[KEY_ID_METADATA];
    if (idBytes === undefined || idBytes === null) {
      throw new CodecError(
        `An encrypted payload has no "${KEY_ID_METADATA}" metadata: it was not written by Keel's codec`,
      );
    }
    const keyId = Buffer.from(idBytes).toString();
    const key = this.ring.keys.get(keyId);
    if (key === undefined) {
      throw new CodecError(
        `A payload is encrypted with key id "${keyId.slice(0, 80)}", which ${this.ring.source} does not list ` +
          `(it lists ${[...this.ring.keys.keys()].join(', ')}): add that key to decrypt it`,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) {
      throw new CodecError(`A payload encrypted with key id "${keyId}" is too short to be AES-256-GCM data`);
    }
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new CodecError(
        `A payload encrypted with key id "${keyId}" does not decrypt with the key ${this.ring.source} gives that id: ` +
          'the key is not the one it was encrypted with, or the payload was altered',
      );
    }
    return Proto.decode(plain);
  }
}
