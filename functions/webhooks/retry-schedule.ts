// The published retry schedule of webhook deliveries (docs/WEBHOOKS.md): the delay after each
// failed attempt, as the delivery function sets it with SQS ChangeMessageVisibility (at most 12 h,
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html).
// After the last retry fails, the queue's redrive policy moves the message to the dead-letter queue.

/** Seconds before retry n (1-based): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then 12 h five times. */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 43_200, 43_200, 43_200, 43_200, 43_200] as const;

/** Attempts in all: the first and one per retry. The queue's maxReceiveCount. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** The whole schedule: 77.6 hours, over the 72 promised. */
export const RETRY_SPAN_SECONDS = RETRY_DELAYS_SECONDS.reduce((sum, delay) => sum + delay, 0);

/**
 * The delay after attempt `attempt` (1-based, SQS's ApproximateReceiveCount) failed. `scale` is the
 * local run's compression of time (MUSEUM_WEBHOOK_RETRY_SCALE, docs/WEBHOOKS.md); the deployed stack
 * never sets it. The first retry is never later than 5 s.
 */
export function retryDelaySeconds(attempt: number, scale = 1): number {
  const delay = RETRY_DELAYS_SECONDS[Math.min(Math.max(attempt, 1), RETRY_DELAYS_SECONDS.length) - 1] ?? 5;
  return Math.max(1, Math.ceil(delay * scale));
}

/** WEBHOOK_RETRY_SCALE, between 0 (exclusive) and 1; 1 when unset. */
export function retryScale(value = process.env.WEBHOOK_RETRY_SCALE): number {
  if (value === undefined || value === '') return 1;
  const scale = Number(value);
  if (!(scale > 0 && scale <= 1)) throw new Error(`WEBHOOK_RETRY_SCALE "${value}" is not a number in (0, 1]`);
  return scale;
}
