// The delivery function: an SQS event source mapping (FIFO queue, partial batch responses) invokes
// it with queued deliveries (lib/cdk/webhook-pipeline.ts: one message per invocation, so no
// delivery waits on another's attempt). Each receive of a message does one of three things:
// - an attempt, when the next is due by the deliveries log (not by ApproximateReceiveCount: a
//   receive is not an attempt). 2xx: delivered. 410: the subscription is disabled. Anything else,
//   or no answer within 10 s: the attempt is counted and the message returns after the published
//   delay; after the last attempt it is dead-lettered and the subscription disabled.
// - a wait: SQS bounds a visibility at 12 hours from the receive, so a longer delay is reached in
//   several receives, none an attempt (retry-schedule.ts, hopSeconds).
// - nothing, for a subscription disabled or deleted since (logged `skipped`, or dropped).
// Messages of one group in a batch are worked in order, groups side by side; the ones behind a
// message that returns are made visible at once, to follow it when it does.
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse } from 'aws-lambda';
import * as v from 'valibot';
import { tableStore } from './config.ts';
import { logger } from './observability.ts';
import { deadLetter, returnAfter } from './webhooks/delivery-queue.ts';
import { WEBHOOK_PIPELINE } from './webhooks/pipeline-settings.ts';
import { DeliveryMessageText, DeliveryRecord, RecordsEvent, type DeliveryMessage } from './webhooks/pipeline-messages.ts';
import { hopSeconds, MAX_DELIVERY_ATTEMPTS, nextStep, retryDelaySeconds, retryScale } from './webhooks/retry-schedule.ts';
import { signingSecrets, type Subscription, SubscriptionNotFoundError, SubscriptionsStore } from './webhooks/subscriptions-store.ts';
import { decryptSecret } from './webhooks/webhook-secrets.ts';
import { ATTEMPT_TIMEOUT_MS, sendWebhook } from './webhooks/webhook-sender.ts';

/** Decrypted secrets by ciphertext, for this environment's life: one KMS Decrypt per secret, not per delivery. */
const secrets = new Map<string, string>();

async function secretOf(ciphertext: string, subscriptionId: string): Promise<string> {
  let secret = secrets.get(ciphertext);
  if (secret === undefined) {
    secret = await decryptSecret(ciphertext, subscriptionId);
    secrets.set(ciphertext, secret);
  }
  return secret;
}

/** Time an attempt needs beyond its 10 s: reading the subscription, decrypting, recording. */
const ATTEMPT_OVERHEAD_MS = 5_000;

/** One invocation's batch: when it arrived (the receive was just before) and what returns to the queue. */
interface Batch {
  arrivedAt: number;
  context: Context;
  scale: number;
  returned: string[];
}

/** What becomes of a received message: deleted (done), or returned to the queue after `seconds`. */
type Disposition = { kind: 'done' } | { kind: 'return'; seconds: number };
const DONE: Disposition = { kind: 'done' };

async function deliverBatch(event: unknown, context: Context): Promise<SQSBatchResponse> {
  const batch: Batch = { arrivedAt: Date.now(), context, scale: retryScale(), returned: [] };
  const groups = new Map<string, DeliveryRecord[]>();
  for (const raw of v.parse(RecordsEvent, event).Records) {
    // Lambda's own envelope: one that does not fit fails the invocation (the batch returns whole).
    const record = v.parse(DeliveryRecord, raw);
    const group = record.attributes.MessageGroupId;
    groups.set(group, [...(groups.get(group) ?? []), record]);
  }
  await Promise.all([...groups.values()].map((records) => deliverGroup(records, batch)));
  return { batchItemFailures: batch.returned.map((itemIdentifier) => ({ itemIdentifier })) };
}

/** One message group's records in order; the ones behind a returned message return at once, unattempted. */
async function deliverGroup(records: readonly DeliveryRecord[], batch: Batch): Promise<void> {
  for (const [index, record] of records.entries()) {
    if (await deliverRecord(record, batch)) continue;
    for (const behind of records.slice(index + 1)) {
      batch.returned.push(behind.messageId);
      await returnAfter(behind.receiptHandle, 0).catch((error: unknown) =>
        logger.warn('A message behind a returned one keeps its visibility timeout', { messageId: behind.messageId, error: String(error) }),
      );
    }
    return;
  }
}

/** True when the message is done with (the mapping deletes it); false when it returns to the queue. */
async function deliverRecord(record: DeliveryRecord, batch: Batch): Promise<boolean> {
  try {
    const disposition = await settle(record, batch);
    if (disposition.kind === 'done') return true;
    const { visibilityTimeoutSeconds } = WEBHOOK_PIPELINE.queue;
    await returnAfter(
      record.receiptHandle,
      hopSeconds(disposition.seconds, Date.now() - batch.arrivedAt, visibilityTimeoutSeconds, batch.scale),
    );
  } catch (error) {
    // Our own failure (DynamoDB, KMS, SQS), not the receiver's: no attempt is counted, and the
    // message returns after the queue's visibility timeout.
    logger.warn('Delivery not attempted: the message returns after its visibility timeout', {
      messageId: record.messageId,
      error: error instanceof Error ? error : String(error),
    });
  }
  batch.returned.push(record.messageId);
  return false;
}

async function settle(record: DeliveryRecord, batch: Batch): Promise<Disposition> {
  const decoded = v.safeParse(DeliveryMessageText, record.body);
  if (!decoded.success) {
    logger.error('Delivery message refused: not a delivery; dead-lettered', {
      messageId: record.messageId,
      reason: v.summarize(decoded.issues),
    });
    await deadLetter({ messageId: record.messageId, body: record.body, groupId: record.attributes.MessageGroupId });
    return DONE;
  }
  const message = decoded.output;
  const store = tableStore(SubscriptionsStore);
  const subscription = await store.get(message.subscriptionId);
  if (!subscription) return DONE; // deleted: nothing to deliver, nowhere to record it
  if (!subscription.enabled) {
    await store.recordAttempt(subscription.id, {
      time: new Date().toISOString(),
      changeId: message.changeId,
      durationMs: 0,
      outcome: 'skipped',
    });
    return DONE;
  }
  const progress = await store.progress(subscription.id, record.messageId);
  let step = nextStep(progress, Date.now());
  if (step.kind === 'wait') return { kind: 'return', seconds: step.seconds };
  if (step.kind === 'exhausted') {
    // Every attempt was made, but the invocation ended before the message was dead-lettered.
    if (!progress.deadLettered) return giveUp(record, subscription, message);
    // An operator redrove it from the dead-letter queue: the schedule starts again.
    await store.restartSchedule(subscription.id, record.messageId);
    step = { kind: 'attempt', attempt: 1 };
  }
  // Too little of the invocation is left for an attempt: back at once, unattempted.
  if (batch.context.getRemainingTimeInMillis() < ATTEMPT_TIMEOUT_MS + ATTEMPT_OVERHEAD_MS) return { kind: 'return', seconds: 0 };
  return attempt(record, subscription, message, step.attempt, batch);
}

async function attempt(record: DeliveryRecord, subscription: Subscription, message: DeliveryMessage, number: number, batch: Batch) {
  const store = tableStore(SubscriptionsStore);
  const keys = await Promise.all(signingSecrets(subscription.secrets).map((secret) => secretOf(secret.ciphertext, subscription.id)));
  const time = new Date().toISOString();
  const result = await sendWebhook(subscription.url, message.changeId, message.cloudEvent, keys);
  const delivered = result.status !== undefined && result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const last = number >= MAX_DELIVERY_ATTEMPTS;
  const outcome = delivered ? 'delivered' : gone ? 'disabled' : last ? 'failed' : 'retrying';
  const delay = retryDelaySeconds(number, batch.scale);
  const attemptRecord = { time, changeId: message.changeId, ...result, outcome } as const;
  const counted = await store.recordCountedAttempt(subscription.id, record.messageId, number, attemptRecord, Date.now() + delay * 1000);
  logger.info('Delivery attempt', {
    subscriptionId: subscription.id,
    changeId: message.changeId,
    attempt: number,
    outcome,
    status: result.status,
    counted,
  });
  if (delivered) return DONE;
  if (gone) return disable(subscription.id, `the receiver answered 410 Gone at ${time}`);
  if (last) return giveUp(record, subscription, message);
  return { kind: 'return', seconds: delay } satisfies Disposition;
}

/** The schedule is used up: the message goes to the dead-letter queue, and the subscription is disabled as after a 410. */
async function giveUp(record: DeliveryRecord, subscription: Subscription, message: DeliveryMessage): Promise<Disposition> {
  await deadLetter({ messageId: record.messageId, body: record.body, groupId: record.attributes.MessageGroupId });
  await tableStore(SubscriptionsStore).markDeadLettered(subscription.id, record.messageId);
  logger.warn('Delivery given up: dead-lettered, the subscription disabled', {
    subscriptionId: subscription.id,
    changeId: message.changeId,
  });
  return disable(
    subscription.id,
    `change ${message.changeId} was not delivered in ${MAX_DELIVERY_ATTEMPTS} attempts (the whole retry schedule): enable the subscription, then replay from before it`,
  );
}

async function disable(subscriptionId: string, reason: string): Promise<Disposition> {
  try {
    await tableStore(SubscriptionsStore).setEnabled(subscriptionId, false, reason);
  } catch (error) {
    if (!(error instanceof SubscriptionNotFoundError)) throw error; // deleted meanwhile: nothing to disable
  }
  return DONE;
}

export const handler = middy(deliverBatch).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }));
