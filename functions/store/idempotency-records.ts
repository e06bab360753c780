// Idempotency records (Idempotency-Key on POST, PATCH and DELETE): one per user, operation and
// key, written in the same transaction as the commit it answers, so a key commits at most once
// however the requests race, time out or lose their answers; a later request with the key gets
// the first answer (or IdempotencyKeyReusedError for another request) for
// LIMITS.idempotencyWindowHours.
//
// Written here rather than with Powertools idempotency: its record is saved in calls of its own
// before and after the handler, so a crash between the write and the record's completion lets
// the retry write again; and its JMESPath engine added 42 KB to a bundle (docs/PERFORMANCE.md).
import { createHash } from 'node:crypto';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Item } from './event-items.ts';
import { LIMITS } from '../events/limits.ts';
import { IdempotencyKeyReusedError } from './store-errors.ts';
import { idempotencyTable } from './table-definition.ts';

/** The Idempotency-Key of a write: the caller's key, scoped to the authenticated principal. */
// `request`: what makes two requests the same beyond the operation (the validated body of a create;
// the event id, body and If-Match as sent of a PATCH or DELETE); undefined: the store's input.
export interface IdempotencyScope {
  principal: string;
  key: string;
  request?: unknown;
}

export interface IdempotencyRequest {
  tableName: string;
  id: string;
  requestHash: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

export function idempotencyRequest(
  tableName: string | undefined,
  operation: 'create' | 'update' | 'delete',
  scope: IdempotencyScope,
  input: unknown,
): IdempotencyRequest {
  if (!tableName) throw new Error('The events store has no idempotency table');
  return {
    tableName,
    // Hashed: keys are up to 255 characters of anything; the id stays short and reveals nothing.
    id: `${operation}#${sha256(`${scope.principal}\u0000${scope.key}`)}`,
    // Validated input (fixed key order, dates normalised): the same event sent with other
    // whitespace or date order is the same request.
    requestHash: sha256(JSON.stringify(scope.request ?? input)),
  };
}

/** The transaction action that stores `answer` under the key, unless a live record holds it. */
export function recordPut(request: IdempotencyRequest, answer: Item, writeId: string, now: Date) {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  return {
    Put: {
      TableName: request.tableName,
      Item: {
        [idempotencyTable.partitionKey.name]: request.id,
        [idempotencyTable.timeToLiveAttribute]: nowSeconds + LIMITS.idempotencyWindowHours * 3600,
        requestHash: request.requestHash,
        writeId,
        ...answer,
        createdAt: now.toISOString(),
      },
      // TTL deletes expired records only eventually: an expired record counts as absent.
      ConditionExpression: 'attribute_not_exists(#id) OR #expiration <= :nowSeconds',
      ExpressionAttributeNames: { '#id': idempotencyTable.partitionKey.name, '#expiration': idempotencyTable.timeToLiveAttribute },
      ExpressionAttributeValues: { ':nowSeconds': nowSeconds },
    },
  };
}

/** The live record of the key (strongly consistent), or undefined; IdempotencyKeyReusedError if it answers another request. */
export async function liveRecord(
  client: DynamoDBDocumentClient,
  request: IdempotencyRequest,
  signal: AbortSignal | undefined,
): Promise<Item | undefined> {
  const { Item: record } = await client.send(
    new GetCommand({ TableName: request.tableName, Key: { [idempotencyTable.partitionKey.name]: request.id }, ConsistentRead: true }),
    { abortSignal: signal },
  );
  if (!record || Number(record[idempotencyTable.timeToLiveAttribute]) <= Math.floor(Date.now() / 1000)) return undefined;
  if (record.requestHash !== request.requestHash) throw new IdempotencyKeyReusedError();
  return record;
}
