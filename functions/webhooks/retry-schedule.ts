// The published retry schedule of webhook deliveries (docs/WEBHOOKS.md), counted in attempts made
// (the deliveries log keeps the count), and how each wait is reached with SQS: the delivery function
// sets a message's visibility (ChangeMessageVisibility), which SQS bounds at 12 hours from the
// receive that took it; a longer wait is reached in several receives ("hops"), none an attempt.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html

/** Seconds before retry n (1-based): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then 12 h five times. */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 43_200, 43_200, 43_200, 43_200, 43_200] as const;

/** Attempts in all: the first and one per retry. After the last fails, the change is dead-lettered. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** SQS's bound on a message's visibility, counted from the receive ("the maximum time left"). */
export const VISIBILITY_CEILING_SECONDS = 43_200;

/**
 * The delay after attempt `attempt` (1-based) failed. `scale` is the local run's compression of time
 * (MUSEUM_WEBHOOK_RETRY_SCALE, docs/WEBHOOKS.md); the deployed stack never sets it. Never below 1 s.
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

/**
 * The visibility to set for a wait of `waitSeconds`, received `sinceReceiveMs` ago: at most what
 * SQS accepts, the 12 hours from the receive less `marginSeconds` (the receive happened before the
 * function's clock started: the mapping may hold a batch up to the queue's visibility timeout before
 * invoking). A longer wait ends early and the next receive waits on. `scale` compresses the
 * ceiling with the delays, so compressed runs hop as deployed ones do; it only ever lowers it.
 */
export function hopSeconds(waitSeconds: number, sinceReceiveMs: number, marginSeconds: number, scale = 1): number {
  const left = Math.floor((VISIBILITY_CEILING_SECONDS - marginSeconds) * scale - sinceReceiveMs / 1000);
  return Math.min(waitSeconds, Math.max(1, left));
}

/** A delivery's progress, from the deliveries log: attempts made, and when the next is due (epoch ms). */
export interface DeliveryProgress {
  attempts: number;
  nextAttemptAt: number;
}

/** What a receive of a delivery does: the next attempt, a wait (not an attempt), or dead-letter (none left). */
export type NextStep = { kind: 'attempt'; attempt: number } | { kind: 'wait'; seconds: number } | { kind: 'exhausted' };

/** Half a second early is on time: a wait shorter than that would cost a receive for nothing. */
const ON_TIME_MS = 500;

export function nextStep(progress: DeliveryProgress, now: number): NextStep {
  if (progress.attempts >= MAX_DELIVERY_ATTEMPTS) return { kind: 'exhausted' };
  const waitMs = progress.nextAttemptAt - now;
  if (waitMs > ON_TIME_MS) return { kind: 'wait', seconds: Math.ceil(waitMs / 1000) };
  return { kind: 'attempt', attempt: progress.attempts + 1 };
}
