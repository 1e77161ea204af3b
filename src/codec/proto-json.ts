import type { Payload } from '@temporalio/common';
import { z } from 'zod';

/** Proto-JSON base64 (standard or URL-safe alphabet, padding optional), as the codec protocol carries bytes. */
const Base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/u, 'must be base64');

/** A `Payloads` message in proto-JSON, the body of a codec server's /encode and /decode. */
export const PayloadsJson = z.object({
  payloads: z.array(
    z.object({
      metadata: z.record(z.string(), Base64).optional(),
      data: Base64.optional(),
    }),
  ),
});
export type PayloadsJson = z.infer<typeof PayloadsJson>;

/** Payloads from their proto-JSON form. */
export function payloadsFromJson(body: PayloadsJson): Payload[] {
  return body.payloads.map(({ metadata, data }) => ({
    metadata: Object.fromEntries(
      Object.entries(metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    ),
    data: Buffer.from(data ?? '', 'base64'),
  }));
}

/** Payloads in proto-JSON form. */
export function payloadsToJson(payloads: Payload[]): PayloadsJson {
  return {
    payloads: payloads.map(({ metadata, data }) => ({
      metadata: Object.fromEntries(
        Object.entries(metadata ?? {}).map(([key, value]) => [
          key,
          Buffer.from(value ?? []).toString('base64'),
        ]),
      ),
      ...(data && data.length > 0 ? { data: Buffer.from(data).toString('base64') } : {}),
    })),
  };
}
