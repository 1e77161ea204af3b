import proto from '@temporalio/proto';

const { TimeoutType } = proto.temporal.api.enums.v1;

/**
 * Why an activity's last attempt failed, as a person reads it, from the failure the server keeps on
 * its pending activity: a timeout by its kind, else the failure's message (sanitized where it was
 * raised; the caller makes it printable and short).
 */
export function attemptReason(failure: proto.temporal.api.failure.v1.IFailure | null | undefined): string {
  const timeout = failure?.timeoutFailureInfo?.timeoutType;
  if (timeout === TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE) return 'had no answer within its timeout';
  if (timeout === TimeoutType.TIMEOUT_TYPE_HEARTBEAT) return 'lost its worker (no heartbeat)';
  const message = failure?.message?.trim() ?? '';
  return message === '' ? 'failed' : `failed: ${message}`;
}
