// The delivery function: an SQS event source mapping (FIFO queue, partial batch responses)
// invokes it with queued deliveries. Each is POSTed to its subscription's URL, signed with every
// secret that signs now; the attempt is recorded for GET .../deliveries. 2xx: delivered. 410: the
// receiver asked to stop, the subscription is disabled. Anything else, or no answer within 10 s:
// the message is made visible again after the published delay (ChangeMessageVisibility) and
// reported failed; after MAX_DELIVERY_ATTEMPTS the queue's redrive policy dead-letters it.
// Powertools' FIFO processor skips the rest of a failed message's group, so a later change of
// the event never overtakes it; those are made visible at once, to follow it when it is retried.
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { processPartialResponse, SqsFifoPartialProcessorAsync } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityBatchCommand, ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from './observability.ts';
import { requiredEnv } from './store/dynamodb-client.ts';
import { sqs, type DeliveryMessage } from './webhooks/delivery-queue.ts';
import { MAX_DELIVERY_ATTEMPTS, retryDelaySeconds, retryScale } from './webhooks/retry-schedule.ts';
import { signingSecrets } from './webhooks/subscriptions-store.ts';
import { subscriptionsStore } from './webhooks/webhook-access.ts';
import { decryptSecret } from './webhooks/webhook-secrets.ts';
import { sendWebhook } from './webhooks/webhook-sender.ts';

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

class DeliveryFailed extends Error {
  override name = 'DeliveryFailed';
}

async function deliver(record: SQSRecord): Promise<void> {
  const message = JSON.parse(record.body) as DeliveryMessage;
  const attempt = Number(record.attributes.ApproximateReceiveCount);
  const store = subscriptionsStore();
  const subscription = await store.get(message.subscriptionId);
  const time = new Date().toISOString();
  if (!subscription) return; // deleted: nothing to deliver, nowhere to record it
  if (!subscription.enabled) {
    await store.recordAttempt(subscription.id, { time, changeId: message.changeId, durationMs: 0, outcome: 'skipped' });
    return;
  }
  const keys = await Promise.all(signingSecrets(subscription.secrets).map((secret) => secretOf(secret.ciphertext, subscription.id)));
  const result = await sendWebhook(subscription.url, message.changeId, message.cloudEvent, keys);
  const delivered = result.status !== undefined && result.status >= 200 && result.status < 300;
  const gone = result.status === 410;
  const outcome = delivered ? 'delivered' : gone ? 'disabled' : attempt >= MAX_DELIVERY_ATTEMPTS ? 'failed' : 'retrying';
  await store.recordAttempt(subscription.id, { time, changeId: message.changeId, ...result, outcome });
  logger.info('Delivery attempt', { subscriptionId: subscription.id, changeId: message.changeId, attempt, outcome, status: result.status });
  if (delivered) return;
  if (gone) {
    await store.setEnabled(subscription.id, false, `the receiver answered 410 Gone at ${time}`);
    return;
  }
  throw new DeliveryFailed(result.error ?? `the receiver answered ${result.status ?? 0}`);
}

/** The messages of this batch that were tried and failed (not skipped behind one that did). */
const tried = new Set<string>();

/** One message: any failure (the receiver's, or reading the subscription) is retried on the schedule. */
async function deliverOnSchedule(record: SQSRecord): Promise<void> {
  try {
    await deliver(record);
  } catch (error) {
    tried.add(record.messageId);
    const attempt = Number(record.attributes.ApproximateReceiveCount);
    if (!(error instanceof DeliveryFailed)) logger.warn('Delivery not attempted', { messageId: record.messageId, error: error as Error });
    if (attempt < MAX_DELIVERY_ATTEMPTS) {
      await sqs().send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: requiredEnv('WEBHOOK_QUEUE_URL'),
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: retryDelaySeconds(attempt, retryScale()),
        }),
      );
    }
    throw error;
  }
}

async function deliverBatch(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  tried.clear();
  const processor = new SqsFifoPartialProcessorAsync();
  const response = await processPartialResponse(event, deliverOnSchedule, processor, {
    context,
    skipGroupOnError: true,
    throwOnFullBatchFailure: false,
  });
  // The messages skipped behind a failed one are visible again at once: their group stays locked
  // by the failed message until it is retried, and they then follow it in order.
  const skipped = event.Records.filter(
    (record) => response.batchItemFailures.some((failure) => failure.itemIdentifier === record.messageId) && !tried.has(record.messageId),
  );
  for (let start = 0; start < skipped.length; start += 10) {
    await sqs().send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: requiredEnv('WEBHOOK_QUEUE_URL'),
        Entries: skipped
          .slice(start, start + 10)
          .map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle, VisibilityTimeout: 0 })),
      }),
    );
  }
  return response;
}

export const handler = middy(deliverBatch).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }));
