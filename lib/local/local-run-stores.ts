// A local run's stores, started in order once its claims are taken (local-run-claims.ts):
// DynamoDB Local (or the DynamoDB at DYNAMODB_ENDPOINT), the credential keys (created at first
// start) served to the functions by the Secrets Manager stand-in, the record of a run whose store
// is not the data directory (for the users CLI), the in-memory database's size bound, the
// functions' environment, and the tables.
import { ensureCredentialKeysFile } from './credential-keys-file.ts';
import { processStart, type DataDirectoryLock } from './data-directory-lock.ts';
import { localCredentials, type DynamoDbLocal } from './dynamodb-local.ts';
import { credentialKeysFile, DATA_DIRECTORY, handlerEnvironment, localDynamoDb, localTableNames } from './local-environment.ts';
import { ensureLocalTables } from './local-tables.ts';
import { registerRun } from './run-registry.ts';
import type { RunLifecycle } from './run-lifecycle.ts';
import { LOCAL_CREDENTIAL_KEYS_SECRET, startSecretsManagerStandIn } from './secrets-manager-stand-in.ts';
import { watchDirectorySize } from './size-watchdog.ts';

export interface RunStores {
  /** The DynamoDB endpoint, and DynamoDB Local when this run started it. */
  dynamodb: { endpoint: string; started?: DynamoDbLocal };
  /** The credential keys file the functions' hashes use. */
  keysFile: string;
  /** The run's record when its store is not the data directory (updated with its URL once it listens). */
  record?: ReturnType<typeof registerRun>;
}

/** Starts the stores; each is stopped (or removed) on stop. */
export async function startStores(
  run: RunLifecycle,
  lock: DataDirectoryLock | undefined,
  settings: { secretsManagerPort: number; inMemoryLimit: number },
): Promise<RunStores> {
  const dynamodb = await startDynamoDb(run, lock);
  // The credential keys (created at first start), served to the functions as Secrets Manager would.
  const keysFile = credentialKeysFile(dynamodb.started && !lock ? dynamodb.started.dataDirectory : undefined);
  await ensureCredentialKeysFile(keysFile);
  const secretsManager = await startSecretsManagerStandIn({
    secrets: { [LOCAL_CREDENTIAL_KEYS_SECRET]: keysFile },
    accessKeyId: localCredentials(dynamodb.endpoint).accessKeyId,
    port: settings.secretsManagerPort,
  });
  run.onStop(() => secretsManager.close());
  const record = lock ? undefined : recordOtherStore(run, dynamodb, keysFile);
  if (dynamodb.started && !lock) boundInMemorySize(run, dynamodb.started.dataDirectory, settings.inMemoryLimit);
  Object.assign(process.env, handlerEnvironment(dynamodb.endpoint, secretsManager.endpoint));
  await run.step('tables', () => ensureLocalTables(dynamodb.endpoint, localTableNames));
  return { dynamodb, keysFile, ...(record ? { record } : {}) };
}

/** DynamoDB Local started (its Java pid recorded in the lock), or DYNAMODB_ENDPOINT's; the run fails if Java exits. */
async function startDynamoDb(run: RunLifecycle, lock: DataDirectoryLock | undefined): Promise<RunStores['dynamodb']> {
  const dynamodb = await run.step(
    'DynamoDB Local',
    async () => {
      const started = await localDynamoDb(run.startUp.signal);
      if (started.started) {
        run.onStop(started.started.stop);
        // Without DynamoDB Local every request would fail: say why, once, and stop.
        started.started.onUnexpectedExit(
          (cause) => void run.fail(`${cause}: stopping, since the API cannot answer without it. Start it again with npm start.`),
        );
      }
      return started;
    },
    (started) => (started.started ? `port ${new URL(started.endpoint).port}` : `at ${started.endpoint}`),
  );
  if (dynamodb.started)
    await lock?.update({
      dynamodbEndpoint: dynamodb.endpoint,
      javaPid: dynamodb.started.javaPid,
      javaStart: processStart(dynamodb.started.javaPid),
    });
  return dynamodb;
}

/**
 * A store other than the data directory (in memory, or DYNAMODB_ENDPOINT): recorded, so that the
 * users CLI does not write into .data/ unseen by this run.
 */
function recordOtherStore(run: RunLifecycle, dynamodb: RunStores['dynamodb'], keysFile: string): ReturnType<typeof registerRun> {
  const record = registerRun({
    dataDirectory: DATA_DIRECTORY,
    store: dynamodb.started ? 'in memory' : dynamodb.endpoint,
    dynamodbEndpoint: dynamodb.endpoint,
    temporaryDirectory: dynamodb.started?.dataDirectory,
    keyId: dynamodb.started?.keyId,
    credentialKeysFile: keysFile,
  });
  run.onStop(async () => record.remove());
  return record;
}

/** Stops the run when the in-memory database's directory grows over MUSEUM_IN_MEMORY_MAX_MB. */
function boundInMemorySize(run: RunLifecycle, directory: string, inMemoryLimit: number): void {
  const stopWatching = watchDirectorySize(
    directory,
    inMemoryLimit,
    (bytes) =>
      void run.fail(
        `The in-memory database directory ${directory} holds ${Math.round(bytes / 1024 / 1024)} MB, over the bound of ` +
          `${Math.round(inMemoryLimit / 1024 / 1024)} MB (MUSEUM_IN_MEMORY_MAX_MB): stopping, so that it cannot fill the machine's memory. ` +
          'DynamoDB Local accepts any client on the network, which can write databases of its own there.',
      ),
  );
  run.onStop(async () => stopWatching());
}
