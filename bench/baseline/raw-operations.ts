// The DynamoDB requests each operation makes, sent straight through a Document client with the
// handlers' client settings and bundled with the same esbuild settings: the baseline that the
// handlers' in-process latency is compared with, so the difference is the handler's own work
// (middleware, validation, logging, metrics, the store's logic, JSON), DynamoDB excluded.
import { randomUUID } from 'node:crypto';
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { monthsBetween } from '../../functions/events/calendar-dates.ts';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import type { SpecialEvent } from '../../functions/events/event-schema.ts';
import { changeItem } from '../../functions/changes/change-feed.ts';
import { BASE_ATTRIBUTES, planMonths, toStoredEvent, versionCondition } from '../../functions/store/event-items.ts';
import { MONTH_END_INDEX, MONTH_INDEX, keys } from '../../functions/store/table-definition.ts';

let client: DynamoDBDocumentClient | undefined;
const documentClient = () => (client ??= createDocumentClient());

/** GET: one strongly consistent GetItem. */
export async function getEvent(table: string, eventId: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await documentClient().send(new GetCommand({ TableName: table, Key: keys.event(eventId), ConsistentRead: true }));
  return Item;
}

/**
 * List: for a window starting after a month's 1st, the sparse byMonthEnd index of that month
 * from startDate (events still running on it), then byMonth queries over the window's months from
 * startDate until `limit` + 1 ids (one past the page, which tells the store whether a next page
 * exists), then one BatchGetItem of them.
 */
export async function listPage(table: string, startDate: string, endDate: string, limit: number): Promise<number> {
  const wanted = limit + 1;
  const ids = new Set<string>();
  if (!startDate.endsWith('-01')) {
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await documentClient().send(
        new QueryCommand({
          TableName: table,
          IndexName: MONTH_END_INDEX,
          KeyConditionExpression: 'gsi2pk = :month AND gsi2sk >= :from',
          ExpressionAttributeValues: { ':month': keys.monthIndexPartition(startDate.slice(0, 7)), ':from': startDate },
          ProjectionExpression: 'pk, sk, gsi2sk, dates',
          Limit: 1000,
          ExclusiveStartKey: exclusiveStartKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      for (const item of page.Items ?? []) {
        const entry = keys.monthIndexEntry(item);
        if (ids.size < wanted && entry.firstDate < startDate && entry.dates.some((date) => date >= startDate && date <= endDate))
          ids.add(entry.eventId);
      }
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey);
  }
  for (const month of monthsBetween(startDate, endDate)) {
    if (ids.size >= wanted) break;
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await documentClient().send(
        new QueryCommand({
          TableName: table,
          IndexName: MONTH_INDEX,
          KeyConditionExpression: 'gsi1pk = :month AND gsi1sk BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':month': keys.monthIndexPartition(month), ':from': startDate, ':to': `${endDate}\u0001` },
          ProjectionExpression: 'pk, sk, gsi1sk, dates',
          Limit: Math.max(32, 2 * (wanted - ids.size)),
          ExclusiveStartKey: exclusiveStartKey,
          ReturnConsumedCapacity: 'TOTAL',
        }),
      );
      for (const item of page.Items ?? []) if (ids.size < wanted) ids.add(keys.eventIdFromPk(String(item.pk)));
      exclusiveStartKey = page.LastEvaluatedKey;
    } while (exclusiveStartKey && ids.size < wanted);
  }
  const response = await documentClient().send(
    new BatchGetCommand({
      RequestItems: {
        [table]: {
          Keys: [...ids].map((id) => keys.event(id)),
          ConsistentRead: true,
          ProjectionExpression: BASE_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(BASE_ATTRIBUTES.map((name, i) => [`#a${i}`, name])),
        },
      },
      ReturnConsumedCapacity: 'TOTAL',
    }),
  );
  return response.Responses?.[table]?.length ?? 0;
}

/**
 * The one transaction every write of the store sends: the base item (Put, or Delete) under the
 * store's own condition (versionCondition), the idempotency record if any, the change item (the
 * feed's outbox, as changeItem builds it) and the month items the store's planMonths puts and
 * deletes.
 */
async function transact(
  table: string,
  eventId: string,
  current: Record<string, unknown> | undefined,
  next: SpecialEvent | undefined,
  record?: Record<string, unknown>,
): Promise<void> {
  const writeId = randomUUID();
  const now = new Date().toISOString();
  const readVersion = current === undefined ? undefined : Number(current.version);
  const condition = {
    ...versionCondition(readVersion, current === undefined ? undefined : writeId),
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
  const plan = planMonths(eventId, current as unknown as SpecialEvent | undefined, next);
  const version = (readVersion ?? 0) + 1;
  const change = changeItem({
    id: writeId,
    eventId,
    previous: current && toStoredEvent(current).event,
    next: next && toStoredEvent(next).event,
    version,
    time: new Date(),
  });
  await documentClient().send(
    new TransactWriteCommand({
      ClientRequestToken: writeId,
      TransactItems: [
        next
          ? {
              Put: {
                TableName: table,
                Item: {
                  ...keys.event(eventId),
                  ...next,
                  version,
                  lastWriteId: writeId,
                  createdAt: now,
                  updatedAt: now,
                },
                ...condition,
              },
            }
          : { Delete: { TableName: table, Key: keys.event(eventId), ...condition } },
        ...(record ? [{ Put: record as { TableName: string; Item: Record<string, unknown> } }] : []),
        { Put: { TableName: table, Item: change } },
        ...plan.puts.map((item) => ({ Put: { TableName: table, Item: item } })),
        ...plan.deletes.map((key) => ({ Delete: { TableName: table, Key: key } })),
      ],
    }),
  );
}

/** POST: one TransactWriteItems of the base item, its month items and, with a key, the idempotency record. */
export async function createEvent(table: string, event: SpecialEvent, idempotency?: { table: string; key: string }): Promise<void> {
  const now = new Date();
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const record = idempotency && {
    TableName: idempotency.table,
    Item: {
      id: `create#${idempotency.key}`,
      expiration: nowSeconds + 86_400,
      requestHash: idempotency.key,
      event,
      createdAt: now.toISOString(),
    },
    ConditionExpression: 'attribute_not_exists(#id) OR #expiration <= :now',
    ExpressionAttributeNames: { '#id': 'id', '#expiration': 'expiration' },
    ExpressionAttributeValues: { ':now': nowSeconds },
  };
  await transact(table, event.eventId, undefined, event, record);
}

/** POST with an Idempotency-Key: the same single transaction, with the idempotency record in it. */
export async function createEventIdempotently(table: string, idempotencyTable: string, event: SpecialEvent, key: string): Promise<void> {
  await createEvent(table, event, { table: idempotencyTable, key });
}

/** PATCH of the price: read the current item, then one transaction rewriting it under its version (as the store does). */
export async function updatePrice(table: string, eventId: string, price: number): Promise<void> {
  const current = await getEvent(table, eventId);
  if (!current) throw new Error(`No event ${eventId}`);
  await transact(table, eventId, current, { ...(current as unknown as SpecialEvent), price });
}

/** PATCH of the dates: the same, with the month items whose dates change. */
export async function updateDates(table: string, eventId: string, dates: string[]): Promise<void> {
  const current = await getEvent(table, eventId);
  if (!current) throw new Error(`No event ${eventId}`);
  await transact(table, eventId, current, { ...(current as unknown as SpecialEvent), dates });
}

/** DELETE: read the current item, then one transaction deleting it and its month items. */
export async function deleteEvent(table: string, eventId: string): Promise<void> {
  const current = await getEvent(table, eventId);
  if (!current) throw new Error(`No event ${eventId}`);
  await transact(table, eventId, current, undefined);
}

export type RawInvocation =
  | { operation: 'get'; table: string; eventId: string }
  | { operation: 'list'; table: string; startDate: string; endDate: string; limit: number }
  | { operation: 'create'; table: string; event: SpecialEvent }
  | { operation: 'createIdempotently'; table: string; idempotencyTable: string; event: SpecialEvent; key: string }
  | { operation: 'update'; table: string; eventId: string; price: number }
  | { operation: 'updateDates'; table: string; eventId: string; dates: string[] }
  | { operation: 'delete'; table: string; eventId: string };

/**
 * Entry point for the cold-start runner: one operation's DynamoDB requests as the first
 * invocation of a fresh process, i.e. what a handler's cold start would cost without the handler.
 */
export async function handler(invocation: RawInvocation): Promise<{ statusCode: number }> {
  switch (invocation.operation) {
    case 'get':
      return { statusCode: (await getEvent(invocation.table, invocation.eventId)) ? 200 : 404 };
    case 'list':
      await listPage(invocation.table, invocation.startDate, invocation.endDate, invocation.limit);
      return { statusCode: 200 };
    case 'create':
      await createEvent(invocation.table, invocation.event);
      return { statusCode: 201 };
    case 'createIdempotently':
      await createEventIdempotently(invocation.table, invocation.idempotencyTable, invocation.event, invocation.key);
      return { statusCode: 201 };
    case 'update':
      await updatePrice(invocation.table, invocation.eventId, invocation.price);
      return { statusCode: 200 };
    case 'updateDates':
      await updateDates(invocation.table, invocation.eventId, invocation.dates);
      return { statusCode: 200 };
    case 'delete':
      await deleteEvent(invocation.table, invocation.eventId);
      return { statusCode: 204 };
  }
}
