// Where the operator CLIs (bin/users.ts, bin/events.ts) read and write: a deployed table
// (`--table`, AWS credentials and region from the usual AWS_* settings), the running `npm start`'s
// DynamoDB Local, or the data directory's own (started here, under its lock).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { lockDataDirectory, lockHolder, processStart } from '../lib/local/data-directory-lock.ts';
import { ensureLocalTables, localClient, startDynamoDbLocal, type DynamoDbLocal } from '../lib/local/dynamodb-local.ts';
import { DATA_DIRECTORY, DYNAMODB_DIRECTORY, localTableNames, useDataDirectoryKey, usesDataDirectory } from '../lib/local/local-environment.ts';
import { otherStoreInUse } from '../lib/local/run-registry.ts';

export interface Store {
  client: DynamoDBClient;
  tableName: string;
  /** Where the change lands, for the note on cached credentials. */
  target: 'deployed' | 'running local API' | 'stored data';
  close(): Promise<void>;
}

/** The deployed table, the running `npm start`'s DynamoDB Local, or the data directory's own (started here, under its lock). */
export async function openStore(table: string | undefined, region: string | undefined, holder: 'users CLI' | 'events CLI'): Promise<Store | string> {
  if (table) {
    const client = new DynamoDBClient(region ? { region } : {});
    return { client, tableName: table, target: 'deployed', close: async () => client.destroy() };
  }
  if (process.env.DYNAMODB_ENDPOINT) {
    const client = localClient(process.env.DYNAMODB_ENDPOINT);
    await ensureLocalTables(process.env.DYNAMODB_ENDPOINT, localTableNames);
    return { client, tableName: localTableNames.events, target: 'stored data', close: async () => client.destroy() };
  }
  if (!usesDataDirectory()) return 'With MUSEUM_IN_MEMORY=1 the data lives inside the running npm start only (for users: set MUSEUM_ADMIN_PASSWORD before it starts instead).';
  // An npm start on another store (in memory, DYNAMODB_ENDPOINT) would never see what is written here.
  const elsewhere = otherStoreInUse(DATA_DIRECTORY, lockHolder(DATA_DIRECTORY)?.holder === 'npm start');
  if (elsewhere) return elsewhere;
  const taken = await lockDataDirectory(DATA_DIRECTORY, holder, (line) => console.error(line));
  if ('heldBy' in taken) {
    const { holder: other, pid, dynamodbEndpoint } = taken.heldBy;
    if (other !== 'npm start') return `Another command (the ${other}, pid ${pid}) is using ${DATA_DIRECTORY}; try again when it has finished.`;
    if (!dynamodbEndpoint) return `The local API (pid ${pid}) is still starting on ${DATA_DIRECTORY}; try again in a moment.`;
    await useDataDirectoryKey(dynamodbEndpoint);
    const client = localClient(dynamodbEndpoint);
    return { client, tableName: localTableNames.events, target: 'running local API', close: async () => client.destroy() };
  }
  const { lock } = taken;
  let dynamodb: DynamoDbLocal | undefined;
  try {
    dynamodb = await startDynamoDbLocal({ dataDirectory: DYNAMODB_DIRECTORY });
    await lock.update({ dynamodbEndpoint: dynamodb.endpoint, javaPid: dynamodb.javaPid, javaStart: processStart(dynamodb.javaPid) });
    await ensureLocalTables(dynamodb.endpoint, localTableNames);
  } catch (error) {
    await dynamodb?.stop();
    await lock.release();
    throw error;
  }
  const client = localClient(dynamodb.endpoint);
  const started = dynamodb;
  return {
    client,
    tableName: localTableNames.events,
    target: 'stored data',
    close: async () => {
      client.destroy();
      await started.stop();
      await lock.release();
    },
  };
}

