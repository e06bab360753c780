// The stream consumer: a DynamoDB Streams event source mapping invokes it with the INSERT records
// of change items (its filter: lib/cdk/webhook-pipeline.ts, CHANGE_STREAM_FILTER), and it queues
// each change once per enabled subscription that takes its type. Records are handled in stream
// order and the first that fails ends the batch: it is reported (ReportBatchItemFailures) and the
// mapping retries from it, so no later change of an event is queued before an earlier one.
// Written without Powertools' BatchProcessor, which goes on past a failed record.
// https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { CHANGE_ITEM, type ChangeType } from './changes/change-event.ts';
import { logger } from './observability.ts';
import { enqueueDeliveries } from './webhooks/delivery-queue.ts';
import { subscriptionsStore } from './webhooks/webhook-access.ts';

async function consumeChanges(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  if (event.Records.length === 0) return { batchItemFailures: [] };
  const subscriptions = (await subscriptionsStore().list()).filter((subscription) => subscription.enabled);
  for (const record of event.Records) {
    const sequenceNumber = record.dynamodb?.SequenceNumber ?? '';
    try {
      const item = unmarshall((record.dynamodb?.NewImage ?? {}) as Record<string, AttributeValue>);
      const cloudEvent = item[CHANGE_ITEM.cloudEventAttribute] as string;
      const type = item[CHANGE_ITEM.typeAttribute] as ChangeType;
      const eventId = item[CHANGE_ITEM.eventIdAttribute] as string;
      const changeId = (JSON.parse(cloudEvent) as { id: string }).id;
      const messages = subscriptions
        .filter((subscription) => subscription.types.includes(type))
        .map((subscription) => ({ subscriptionId: subscription.id, changeId, eventId, cloudEvent }));
      await enqueueDeliveries(messages);
      logger.info('Change queued', { changeId, type, subscriptions: messages.length });
    } catch (error) {
      logger.error('Change not queued: the mapping retries from it', { sequenceNumber, error: error as Error });
      return { batchItemFailures: [{ itemIdentifier: sequenceNumber }] };
    }
  }
  return { batchItemFailures: [] };
}

export const handler = middy(consumeChanges).use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }));
