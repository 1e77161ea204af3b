// Plain JavaScript syntax on purpose: the SDK loads this module by path with `require` (in the
// worker, and inside the workflow bundle), which a checkout run under vitest does without a
// TypeScript loader.
import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Failures with their message and stack trace moved into an encoded attribute, so the payload
 * codec encrypts them too (Temporal's `encodeCommonAttributes`): the `failureConverter` export a
 * `failureConverterPath` must name.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
