import { createHash } from 'node:crypto';
import type { Payload, StorageDriverTargetInfo } from '@temporalio/common';
import { StorageDriverClaim } from '@temporalio/common';
import proto from '@temporalio/proto';

const PayloadProto = proto.temporal.api.common.v1.Payload;

/** A payload as a store keeps it: its bytes, their SHA-256, and the run it belongs to. */
export interface Blob {
  /** SHA-256 (hex) of `namespace`, NUL, workflow id: a file-name-safe key for the run, whatever its id. */
  scope: string;
  /** SHA-256 (hex) of `bytes`: the key, so a retried store writes the same blob, and the integrity check. */
  sha256: string;
  /** The payload as protobuf, exactly as it would have gone into history (already encrypted, when a codec is on). */
  bytes: Uint8Array;
  /** Whose history refers to it, for the sweep; absent when the SDK did not say (a standalone activity). */
  owner: BlobOwner | undefined;
}

/** The workflow whose history holds the reference. */
export interface BlobOwner {
  namespace: string;
  workflowId: string;
}

/** The scope of blobs without a known run: swept by age alone. */
export const UNOWNED_SCOPE = 'unowned';

/** The blob for a payload the SDK hands a driver to store. */
export function toBlob(payload: Payload, target: StorageDriverTargetInfo | undefined): Blob {
  const bytes = PayloadProto.encode(payload).finish();
  // An activity's payloads name its workflow (the SDK targets the workflow for activities in one).
  const owner =
    target?.kind === 'workflow' && target.id !== undefined
      ? { namespace: target.namespace, workflowId: target.id }
      : undefined;
  return { scope: ownerScope(owner), sha256: sha256(bytes), bytes, owner };
}

/** The scope key of an owner. */
export function ownerScope(owner: BlobOwner | undefined): string {
  if (owner === undefined) return UNOWNED_SCOPE;
  return createHash('sha256').update(`${owner.namespace}\0${owner.workflowId}`, 'utf8').digest('hex');
}

/** What history holds instead of the payload (besides the driver's name and the payload's size). */
export function claimOf(blob: Pick<Blob, 'scope' | 'sha256'>): StorageDriverClaim {
  return new StorageDriverClaim({ scope: blob.scope, sha256: blob.sha256 });
}

/** A claim read back from history, checked: its keys become file names and SQL values. */
export function readClaim(claim: StorageDriverClaim, driver: string): { scope: string; sha256: string } {
  const { scope, sha256: hash } = claim.claimData;
  if (
    hash === undefined ||
    !/^[0-9a-f]{64}$/u.test(hash) ||
    scope === undefined ||
    !(scope === UNOWNED_SCOPE || /^[0-9a-f]{64}$/u.test(scope))
  ) {
    throw new PayloadStoreError(
      `${driver}: a reference in history is not one Keel wrote (claim ${JSON.stringify(claim.claimData)})`,
    );
  }
  return { scope, sha256: hash };
}

/**
 * The payload from a blob's bytes, after checking they are the bytes that were stored: the store
 * is reachable by more than the worker, and a changed blob must not become a model's input.
 */
export function fromBlob(
  bytes: Uint8Array,
  claim: { scope: string; sha256: string },
  where: string,
): Payload {
  const actual = sha256(bytes);
  if (actual !== claim.sha256) {
    throw new PayloadStoreError(
      `The stored payload ${claim.sha256} in ${where} was changed after it was written (its SHA-256 is now ` +
        `${actual}); it is not used. Restore it from a backup (it is left as it is); the task is retried.`,
    );
  }
  return PayloadProto.decode(bytes);
}

/** A payload store could not keep or give back a payload. */
export class PayloadStoreError extends Error {
  override name = 'PayloadStoreError';
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
