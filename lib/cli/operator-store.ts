// Where the operator CLIs (bin/users.ts, bin/events.ts) read and write: a deployed table
// (`--table`, AWS credentials and region from the usual AWS_* settings), the running `npm start`'s
// DynamoDB Local (on the data directory, or in memory), or the data directory's own (started
// here, under its lock).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureCredentialKeysFile } from '../local/credential-keys-file.ts';
import { lockDataDirectory, lockHolder, processStart } from '../local/data-directory-lock.ts';
import { localClient, startDynamoDbLocal, useKeyId, type DynamoDbLocal } from '../local/dynamodb-local.ts';
import { ensureLocalTables } from '../local/local-tables.ts';
import {
  credentialKeysFile,
  DATA_DIRECTORY,
  DYNAMODB_DIRECTORY,
  inMemory,
  localTableNames,
  useDataDirectoryKey,
} from '../local/local-environment.ts';
import { settingProblems, STORE_SETTINGS } from '../local/local-settings.ts';
import { runsOnOtherStores, type RunRecord } from '../local/run-registry.ts';

export interface Store {
  client: DynamoDBClient;
  tableName: string;
  /** Where the change lands, for the note on cached credentials. */
  target: 'deployed' | 'running local API' | 'stored data';
  /**
   * True when nothing else can write while this store is open (this process holds the data
   * directory's lock and runs its DynamoDB Local): a read of the whole table is then a snapshot.
   */
  exclusive: boolean;
  /** Said after a change that lands somewhere a person may not expect (an in-memory run). */
  note?: string;
  /** The local credential keys (lib/local/credential-keys-file.ts); none for a deployed table (its secret: `--secret`). */
  credentialKeysFile?: string;
  close(): Promise<void>;
}

/** The settings the store reads, checked before anything is created: one line per refused value, or undefined. */
export function storeSettingsProblem(): string | undefined {
  const problems = settingProblems(process.env, STORE_SETTINGS);
  return problems.length > 0 ? problems.join('\n') : undefined;
}

/** The running in-memory `npm start`'s DynamoDB Local, through the key id its run record keeps. */
function inMemoryRun(run: RunRecord): Store | string {
  if (!run.keyId || !run.credentialKeysFile)
    return `The local API running${run.url ? ` on ${run.url}` : ''} (pid ${run.pid}) in memory was started by an older version: restart it to use the CLIs with it.`;
  useKeyId(run.dynamodbEndpoint, run.keyId);
  const client = localClient(run.dynamodbEndpoint);
  return {
    client,
    tableName: localTableNames.events,
    target: 'running local API',
    exclusive: false,
    credentialKeysFile: run.credentialKeysFile,
    note: `This changed the in-memory local API running${run.url ? ` on ${run.url}` : ''} (pid ${run.pid}): it is gone when that run stops.`,
    close: async () => client.destroy(),
  };
}

/** The deployed table, the running `npm start`'s DynamoDB Local, or the data directory's own (started here, under its lock). */
export async function openStore(
  table: string | undefined,
  region: string | undefined,
  holder: 'users CLI' | 'events CLI',
): Promise<Store | string> {
  if (table) return deployedStore(table, region);
  if (process.env.DYNAMODB_ENDPOINT) return endpointStore(process.env.DYNAMODB_ENDPOINT);
  return runOnOtherStore() ?? dataDirectoryStore(holder);
}

/** `--table`: the deployed table, with the operator's AWS credentials and region. */
function deployedStore(table: string, region: string | undefined): Store {
  const client = new DynamoDBClient(region ? { region } : {});
  return { client, tableName: table, target: 'deployed', exclusive: false, close: async () => client.destroy() };
}

/** DYNAMODB_ENDPOINT: that DynamoDB, its tables and the data directory's credential keys made if missing. */
async function endpointStore(endpoint: string): Promise<Store> {
  const client = localClient(endpoint);
  await ensureLocalTables(endpoint, localTableNames);
  await ensureCredentialKeysFile(credentialKeysFile());
  return {
    client,
    tableName: localTableNames.events,
    target: 'stored data',
    exclusive: false,
    credentialKeysFile: credentialKeysFile(),
    close: async () => client.destroy(),
  };
}

/**
 * The run of this MUSEUM_DATA_DIR on another store than the data directory, when it is the one
 * meant (its store, or a refusal saying which to use); undefined when the data directory is meant.
 */
function runOnOtherStore(): Store | string | undefined {
  // Which run (README, "Users"): the CLI's own MUSEUM_IN_MEMORY=1 means the in-memory run of this
  // MUSEUM_DATA_DIR, whatever else runs. Otherwise a start on the data directory wins; without one,
  // a single npm start on another store of this MUSEUM_DATA_DIR is the one a person is using
  // (writing into the data directory would never reach it). Several candidates: refused, naming them.
  const inMemoryRuns = (runs: RunRecord[]) => runs.filter((run) => run.store === 'in memory');
  const others = inMemory()
    ? inMemoryRuns(runsOnOtherStores(DATA_DIRECTORY))
    : lockHolder(DATA_DIRECTORY)?.holder === 'npm start'
      ? []
      : runsOnOtherStores(DATA_DIRECTORY);
  const candidates = inMemoryRuns(others);
  if (inMemory() && candidates.length === 0)
    return `No local API is running in memory (MUSEUM_IN_MEMORY=1) for ${DATA_DIRECTORY}: start one with MUSEUM_IN_MEMORY=1 npm start first (with the same MUSEUM_DATA_DIR, if any).`;
  if (candidates.length > 1)
    return `Several local APIs run in memory for ${DATA_DIRECTORY} (pids ${candidates.map((run) => run.pid).join(', ')}): stop all but one, or start each with its own MUSEUM_DATA_DIR and give the CLI the same.`;
  if (candidates[0]) return inMemoryRun(candidates[0]);
  const external = others[0];
  if (external) {
    return (
      `The local API running${external.url ? ` on ${external.url}` : ''} (pid ${external.pid}) keeps its data in DynamoDB at ${external.store} (DYNAMODB_ENDPOINT), ` +
      `not in ${DATA_DIRECTORY}: run the CLI with DYNAMODB_ENDPOINT=${external.store} (and the same MUSEUM_DYNAMODB_KEY_ID) to act on it.`
    );
  }
  return undefined;
}

/**
 * The data directory: the running `npm start`'s DynamoDB Local on it when one holds its lock,
 * else its own, started here under the lock.
 */
async function dataDirectoryStore(holder: 'users CLI' | 'events CLI'): Promise<Store | string> {
  const taken = await lockDataDirectory(DATA_DIRECTORY, holder, (line) => console.error(line));
  if ('heldBy' in taken) {
    const { holder: other, pid, dynamodbEndpoint } = taken.heldBy;
    if (other !== 'npm start')
      return `Another command (the ${other}, pid ${pid}) is using ${DATA_DIRECTORY}; try again when it has finished.`;
    if (!dynamodbEndpoint) return `The local API (pid ${pid}) is still starting on ${DATA_DIRECTORY}; try again in a moment.`;
    await useDataDirectoryKey(dynamodbEndpoint);
    const client = localClient(dynamodbEndpoint);
    return {
      client,
      tableName: localTableNames.events,
      target: 'running local API',
      exclusive: false,
      credentialKeysFile: credentialKeysFile(),
      close: async () => client.destroy(),
    };
  }
  const { lock } = taken;
  let dynamodb: DynamoDbLocal | undefined;
  try {
    dynamodb = await startDynamoDbLocal({ dataDirectory: DYNAMODB_DIRECTORY });
    await lock.update({ dynamodbEndpoint: dynamodb.endpoint, javaPid: dynamodb.javaPid, javaStart: processStart(dynamodb.javaPid) });
    await ensureLocalTables(dynamodb.endpoint, localTableNames);
    await ensureCredentialKeysFile(credentialKeysFile());
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
    exclusive: true,
    credentialKeysFile: credentialKeysFile(),
    close: async () => {
      client.destroy();
      await started.stop();
      await lock.release();
    },
  };
}
