// The local bootstrap turns the events table's stream and TTL on where an older data directory's
// table lacks them, as UpdateTable and UpdateTimeToLive do on AWS
// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html,
// https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html).
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand, DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { eventsTable } from '../../functions/store/table-definition.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { ensureTable } from '../../lib/local/local-tables.ts';
import { testEnvironment } from '../support/test-environment.ts';

const client = localClient(testEnvironment().dynamodbEndpoint);
const tableName = `older-events-${randomUUID()}`;

afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: tableName }));
  client.destroy();
});

test("an events table from before the change feed gets the definition's stream (NEW_IMAGE) and TTL on expiresAt at start", async () => {
  const { stream: _stream, timeToLiveAttribute: _ttl, ...older } = eventsTable;
  await ensureTable(client, tableName, older);
  expect((await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.StreamSpecification?.StreamEnabled).not.toBe(true);

  await ensureTable(client, tableName, eventsTable);
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
  expect(Table?.LatestStreamArn).toBeDefined();
  const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  expect(TimeToLiveDescription).toMatchObject({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });

  // A second start changes nothing (the stream keeps its ARN: consumers keep their position).
  await ensureTable(client, tableName, eventsTable);
  expect((await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.LatestStreamArn).toBe(Table?.LatestStreamArn);
});
