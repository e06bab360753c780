// The stream consumer: a DynamoDB Streams event source mapping invokes it with the INSERT records
// of change items (its filter: lib/cdk/webhook-pipeline.ts, CHANGE_STREAM_FILTER), and it queues
// each change once per enabled subscription that takes its type. Each record is decoded with the
// change item's schema (webhooks/pipeline-messages.ts); records are handled in stream order and the
// first that does not fit, or cannot be queued, ends the batch: it is reported with its reason
// (ReportBatchItemFailures) and the mapping retries from it, so no later change of an event is
// queued before an earlier one. Written without Powertools' BatchProcessor, which goes on past a
// failed record.
// https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { DynamoDBBatchResponse } from 'aws-lambda';
import * as v from 'valibot';
import { tableStore } from './config.ts';
import { SubscriptionsStore } from './webhooks/subscriptions-store.ts';
import { logger } from './observability.ts';
import { enqueueDeliveries } from './webhooks/delivery-queue.ts';
import { ChangeStreamRecord, RecordsEvent } from './webhooks/pipeline-messages.ts';

/** What names a record in a failure report, read from a record that may fit nothing else. */
const SequenceNumbered = v.object({ dynamodb: v.object({ SequenceNumber: v.string() }) });

function retryFrom(record: unknown, reason: string): DynamoDBBatchResponse {
  const named = v.safeParse(SequenceNumbered, record);
  // An empty identifier fails the whole batch, which the mapping then retries from its start.
  const sequenceNumber = named.success ? named.output.dynamodb.SequenceNumber : '';
  logger.error('Change not queued: the mapping retries from it', { sequenceNumber, reason });
  return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
}

async function consumeChanges(event: unknown): Promise<DynamoDBBatchResponse> {
  const { Records } = v.parse(RecordsEvent, event);
  if (Records.length === 0) return { batchItemFailures: [] };
  const subscriptions = (await tableStore(SubscriptionsStore).list()).filter((subscription) => subscription.enabled);
  for (const record of Records) {
    const decoded = v.safeParse(ChangeStreamRecord, record);
    if (!decoded.success) return retryFrom(record, `not a change item's INSERT: ${v.summarize(decoded.issues)}`);
    const { changeId, type, eventId, cloudEvent } = decoded.output;
    const messages = subscriptions
      .filter((subscription) => subscription.types.includes(type))
      .map((subscription) => ({ subscriptionId: subscription.id, changeId, eventId, cloudEvent }));
    try {
      await enqueueDeliveries(messages);
    } catch (error) {
      return retryFrom(record, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    }
    logger.info('Change queued', { changeId, type, subscriptions: messages.length });
  }
  return { batchItemFailures: [] };
}

export const handler = middy(consumeChanges).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }));
