// The delivery queue's messages: one per change and subscription, sent by the stream consumer and
// by a replay, read by the delivery function. An SQS FIFO queue: the message group is the
// subscription and the event, so one event's changes reach one receiver in commit order while
// other events' and receivers' go on beside them; the deduplication id keeps a consumer retry
// (the same stream batch again) from queueing a change twice within SQS's 5-minute window.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html
import { createHash } from 'node:crypto';
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { requiredEnv } from '../environment.ts';
import type { DeliveryMessage } from './pipeline-messages.ts';

export type { DeliveryMessage };

let client: SQSClient | undefined;
export function sqs(): SQSClient {
  // The endpoint comes from the SDK's AWS_ENDPOINT_URL_SQS, which the local run points at its stand-in.
  return (client ??= new SQSClient({ maxAttempts: 3 }));
}

/** SQS's limit per SendMessageBatch. */
const BATCH = 10;

function hashed(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('base64url');
}

/**
 * Queues `messages`; `replayId` makes them new messages (a replay sends changes the queue has seen
 * before). Throws if any entry failed, after sending the rest: the caller retries the whole lot,
 * and deduplication drops what was already queued.
 */
export async function enqueueDeliveries(messages: readonly DeliveryMessage[], replayId = '', abortSignal?: AbortSignal): Promise<void> {
  const queueUrl = requiredEnv('WEBHOOK_QUEUE_URL');
  const failures: string[] = [];
  for (let start = 0; start < messages.length; start += BATCH) {
    const batch = messages.slice(start, start + BATCH);
    const answer = await sqs().send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((message, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify(message),
          // At most 128 characters: a subscription id (25) and an eventId (a UUID, 36).
          MessageGroupId: `${message.subscriptionId}.${message.eventId}`,
          MessageDeduplicationId: hashed(message.subscriptionId, message.changeId, replayId),
        })),
      }),
      abortSignal ? { abortSignal } : {},
    );
    for (const failed of answer.Failed ?? []) failures.push(`${failed.Code ?? 'error'}: ${failed.Message ?? ''}`);
  }
  if (failures.length > 0) throw new Error(`SendMessageBatch failed for ${failures.length} messages (${failures[0] ?? ''})`);
}

/**
 * Makes a received message visible again after `seconds` (0: at once). SQS refuses a value beyond
 * the 12 hours left since the receive; the caller keeps within them (retry-schedule.ts, hopSeconds).
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html
 */
export async function returnAfter(receiptHandle: string, seconds: number): Promise<void> {
  await sqs().send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: requiredEnv('WEBHOOK_QUEUE_URL'),
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );
}

/**
 * Puts a delivery the function gave up on (its schedule used, or a body that is no delivery) into
 * the dead-letter queue, in its message group, deduplicated by its message id as SQS's own redrive
 * does (sqs-configure-dead-letter-queue-redrive.html); the caller then lets the mapping delete it.
 */
export async function deadLetter(record: { messageId: string; body: string; groupId: string }): Promise<void> {
  await sqs().send(
    new SendMessageCommand({
      QueueUrl: requiredEnv('WEBHOOK_DEAD_LETTER_QUEUE_URL'),
      MessageBody: record.body,
      MessageGroupId: record.groupId,
      MessageDeduplicationId: record.messageId,
    }),
  );
}
