// The local tables, created from the shared table definitions (functions/store/table-definition.ts)
// in DynamoDB Local or at DYNAMODB_ENDPOINT, and a data directory's older tables brought up to them.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  type DynamoDBClient,
  ListTablesCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { eventsTable, idempotencyTable, type TableDefinition } from '../../functions/store/table-definition.ts';
import { localClient } from './dynamodb-local.ts';

/** Creates the table if it is missing (on-demand, like the deployed one). */
export async function ensureTable(client: DynamoDBClient, tableName: string, definition: TableDefinition): Promise<void> {
  const { TableNames = [] } = await client.send(new ListTablesCommand({}));
  if (TableNames.includes(tableName)) {
    // A data directory from before an index change (e.g. `byDate` replaced by `byMonth`, or
    // `byMonthEnd` added) cannot serve this code: every index of the definition must be there.
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    const missing = definition.globalSecondaryIndexes.filter((index) => !present.has(index.indexName)).map((index) => index.indexName);
    if (missing.length > 0) {
      throw new Error(
        `Table ${tableName} lacks the index ${missing.join(', ')}: export its events, delete the data directory and import them (README, Data model)`,
      );
    }
    // A data directory from before the stream or the TTL: both are turned on in place, as
    // UpdateTable and UpdateTimeToLive do on AWS (a stream's view type cannot change while it is on).
    const stream = Table?.StreamSpecification;
    if (definition.stream && !(stream?.StreamEnabled && stream.StreamViewType === definition.stream)) {
      if (stream?.StreamEnabled)
        await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: false } }));
      await client.send(
        new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: definition.stream } }),
      );
    }
    await ensureTimeToLive(client, tableName, definition);
    return;
  }
  const keyAttributes = [
    definition.partitionKey,
    ...(definition.sortKey ? [definition.sortKey] : []),
    ...definition.globalSecondaryIndexes.flatMap((index) => [index.partitionKey, index.sortKey]),
  ];
  const attributeDefinitions = [...new Map(keyAttributes.map((key) => [key.name, key])).values()];
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: attributeDefinitions.map((key) => ({ AttributeName: key.name, AttributeType: key.type })),
      KeySchema: [
        { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
        ...(definition.sortKey ? [{ AttributeName: definition.sortKey.name, KeyType: 'RANGE' as const }] : []),
      ],
      GlobalSecondaryIndexes:
        definition.globalSecondaryIndexes.length > 0
          ? definition.globalSecondaryIndexes.map((index) => ({
              IndexName: index.indexName,
              KeySchema: [
                { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
                { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
              ],
              Projection:
                index.projection.type === 'INCLUDE'
                  ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection.attributes] }
                  : { ProjectionType: 'KEYS_ONLY' },
            }))
          : undefined,
      ...(definition.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: definition.stream } } : {}),
    }),
  );
  while ((await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus !== 'ACTIVE') {
    await sleep(50);
  }
  await ensureTimeToLive(client, tableName, definition);
}

/**
 * TTL on the definition's attribute. DynamoDB Local accepts the setting but never deletes expired
 * items; the readers ignore expired items themselves, as they must on AWS too, where TTL deletes
 * late (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
 */
async function ensureTimeToLive(client: DynamoDBClient, tableName: string, definition: TableDefinition): Promise<void> {
  if (!definition.timeToLiveAttribute) return;
  const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  if (TimeToLiveDescription?.TimeToLiveStatus === 'ENABLED' && TimeToLiveDescription.AttributeName === definition.timeToLiveAttribute)
    return;
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: definition.timeToLiveAttribute, Enabled: true },
    }),
  );
}

export const LOCAL_TABLE_NAMES = { events: 'museum-special-events', idempotency: 'museum-idempotency' } as const;

export async function ensureLocalTables(
  endpoint: string,
  names: { events: string; idempotency: string } = LOCAL_TABLE_NAMES,
): Promise<void> {
  const client = localClient(endpoint);
  try {
    await ensureTable(client, names.events, eventsTable);
    await ensureTable(client, names.idempotency, idempotencyTable);
  } finally {
    client.destroy();
  }
}
