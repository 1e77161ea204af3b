import type { BlobOwner } from './blob.js';

/**
 * Whether Temporal still has a history for this workflow (running, or ended but within the
 * namespace's retention): its blobs are then referred to and must stay. Unsure counts as yes.
 */
export type OwnerKnown = (owner: BlobOwner) => Promise<boolean>;

/** A store whose old blobs can be deleted. */
export interface BlobSweep {
  /**
   * Deletes the blobs of every run whose newest blob is older than `keepMs` and whose history
   * Temporal no longer has; resolves with how many were deleted.
   */
  sweep(ownerKnown: OwnerKnown, keepMs: number): Promise<number>;
  /** Ends the store's connections. */
  close(): Promise<void>;
}
