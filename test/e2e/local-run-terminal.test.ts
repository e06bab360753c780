// `npm start` as a person at a terminal meets it: Ctrl-C (SIGINT to the whole foreground process
// group, npm and the server together), an in-memory run that an outsider tries to grow without
// bound, the users CLI beside an in-memory run, and a second start on unchanged sources. Every
// process a test starts is killed afterwards whatever happens (killAllRuns); waits are bounded
// and generous (a busy machine), and nothing here asserts a duration.
import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { lockDataDirectory } from '../../lib/local/data-directory-lock.ts';
import { runningRuns, type RunRecord } from '../../lib/local/run-registry.ts';
import {
  eventually,
  isRunning,
  javaProcessesUsing,
  killAllRuns,
  lockRecord,
  startLocalRun,
  untilListening,
  type LocalRun,
} from '../support/local-run.ts';

// Real processes on a loaded machine: a first start has taken 35 s there. Generous bounds, no timing asserts.
jest.setTimeout(300_000);

const run = promisify(execFile);
const START_TIMEOUT = 240_000;

async function dataDirectory(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'museum-local-terminal-')), 'data');
}

/** The run registry's record of a run on another store than its data directory (in memory here). */
async function runRecord(local: LocalRun): Promise<RunRecord> {
  let record: RunRecord | undefined;
  const find = () => (record = runningRuns().find((one) => one.pid === local.child.pid || isChildOf(one.pid, local.child.pid)));
  const found = await eventually(() => find() !== undefined, 60_000);
  if (!found || !record) throw new Error(`No run record for the local run:\n${local.output()}`);
  return record;
}

/** npm runs the server as its child (exec replaces the shell): the record names the server's pid. */
function isChildOf(pid: number, parent: number | undefined): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return parent !== undefined && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent;
  } catch {
    return false;
  }
}

afterEach(() => killAllRuns());

describe('Ctrl-C in a terminal (SIGINT to the whole process group)', () => {
  test(
    'on the data directory: npm exits 0, the server stops once (no "again"), Java and the lock are gone',
    async () => {
      const data = await dataDirectory();
      const local = await startLocalRun({ MUSEUM_DATA_DIR: data }, { npm: true });
      await untilListening(local, START_TIMEOUT);
      const lock = lockRecord(data);
      expect(isRunning(lock?.javaPid)).toBe(true);
      process.kill(-(local.child.pid as number), 'SIGINT');
      // npm forwards its own copy of the SIGINT to the server; two deliveries that close together
      // usually merge into one, but on a busy machine npm's copy comes later, as here.
      await new Promise((resolve) => setTimeout(resolve, 300));
      try {
        process.kill(lock?.pid as number, 'SIGINT');
      } catch {
        // already gone
      }
      expect(await local.exited).toBe(0);
      expect(local.output()).toMatch(/SIGINT: stopping/);
      expect(local.output()).not.toMatch(/again/);
      expect(
        await eventually(() => !isRunning(lock?.pid) && !isRunning(lock?.javaPid) && javaProcessesUsing(data).length === 0, 30_000),
      ).toBe(true);
      expect(lockRecord(data)).toBeUndefined();
    },
    START_TIMEOUT + 60_000,
  );

  test(
    'in memory: npm exits 0 and the temporary directory (the database, the password hashes) is removed',
    async () => {
      const data = await dataDirectory();
      const local = await startLocalRun(
        { MUSEUM_DATA_DIR: data, MUSEUM_IN_MEMORY: '1', MUSEUM_ADMIN_PASSWORD: 'laptop-admin-password-1' },
        { npm: true },
      );
      await untilListening(local, START_TIMEOUT);
      const record = await runRecord(local);
      const directory = record.temporaryDirectory as string;
      expect(existsSync(directory)).toBe(true);
      expect(javaProcessesUsing(directory)).toHaveLength(1);
      process.kill(-(local.child.pid as number), 'SIGINT');
      expect(await local.exited).toBe(0);
      expect(local.output()).not.toMatch(/again/);
      expect(await eventually(() => javaProcessesUsing(directory).length === 0 && !isRunning(record.pid), 30_000)).toBe(true);
      expect(existsSync(directory)).toBe(false);
      expect(runningRuns().some((one) => one.pid === record.pid)).toBe(false);
      expect(existsSync(data)).toBe(false); // an in-memory run writes nothing under the data directory
    },
    START_TIMEOUT + 60_000,
  );
});

describe('the emergency exit (a signal seconds after the first, while the stop hangs)', () => {
  test('in memory: exits 1 at once, Java killed, and the temporary directory removed all the same', async () => {
    const data = await dataDirectory();
    const local = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_IN_MEMORY: '1', MUSEUM_ADMIN_PASSWORD: 'laptop-admin-password-1' });
    await untilListening(local, START_TIMEOUT);
    const record = await runRecord(local);
    const directory = record.temporaryDirectory as string;
    const [javaPid] = javaProcessesUsing(directory);
    process.kill(javaPid as number, 'SIGSTOP'); // a Java that does not stop when asked: the first stop hangs
    process.kill(local.child.pid as number, 'SIGTERM');
    expect(await eventually(() => local.output().includes('SIGTERM: stopping'), 30_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    process.kill(local.child.pid as number, 'SIGTERM');
    expect(await local.exited).toBe(1);
    expect(local.output()).toMatch(/SIGTERM again: exiting at once/);
    expect(await eventually(() => !isRunning(javaPid) && !existsSync(directory), 30_000)).toBe(true);
  });
});

describe('the in-memory database', () => {
  test(
    'cannot outgrow its bound: an outsider writing under another key id stops the run with a message, and the directory goes',
    async () => {
      const data = await dataDirectory();
      const local = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_IN_MEMORY: '1', MUSEUM_IN_MEMORY_MAX_MB: '2' });
      await untilListening(local, START_TIMEOUT);
      const record = await runRecord(local);
      const outsider = new DynamoDBClient({
        endpoint: record.dynamodbEndpoint,
        region: 'local',
        credentials: { accessKeyId: 'outsider', secretAccessKey: 'x' },
        maxAttempts: 1,
      });
      try {
        await outsider.send(
          new CreateTableCommand({
            TableName: 'filler',
            BillingMode: 'PAY_PER_REQUEST',
            AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          }),
        );
        // 300 KB items until the run stops (it then refuses connections): at most 40 (12 MB).
        for (let i = 0; i < 40 && local.child.exitCode === null; i++) {
          const written = await outsider
            .send(new PutItemCommand({ TableName: 'filler', Item: { pk: { S: `item${i}` }, data: { S: 'x'.repeat(300_000) } } }))
            .then(
              () => true,
              () => false,
            );
          if (!written) break;
        }
      } finally {
        outsider.destroy();
      }
      expect(await local.exited).toBe(1);
      expect(local.stderr()).toMatch(/over the bound of 2 MB \(MUSEUM_IN_MEMORY_MAX_MB\)/);
      expect(
        await eventually(
          () => !existsSync(record.temporaryDirectory as string) && javaProcessesUsing(record.temporaryDirectory as string).length === 0,
          30_000,
        ),
      ).toBe(true);
    },
    START_TIMEOUT + 120_000,
  );
});

describe('the users CLI beside an in-memory run', () => {
  test(
    'acts on the running in-memory store: the password change the start advises works, and an added user can log in; nothing is written under the data directory',
    async () => {
      const data = await dataDirectory();
      const local = await startLocalRun({ MUSEUM_DATA_DIR: data, MUSEUM_IN_MEMORY: '1' });
      const url = await untilListening(local, START_TIMEOUT);
      // The start advises exactly this command for the generated password.
      expect(local.output()).toContain('change it with: npm run -s users -- passwd admin');
      const users = async (args: string[], password: string, env: Record<string, string> = {}) => {
        const child = run(process.execPath, ['--import', 'tsx', 'bin/users.ts', ...args], {
          env: { ...process.env, MUSEUM_DATA_DIR: data, ...env },
        });
        child.child.stdin?.end(password);
        return child.then(
          ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr, stdout }),
          (error: unknown) => {
            const failed = error as { code: number; stdout: string; stderr: string };
            return { code: failed.code, output: failed.stdout + failed.stderr, stdout: failed.stdout };
          },
        );
      };
      const passwd = await users(['passwd', 'admin'], 'new-admin-password-1\n');
      expect(passwd).toMatchObject({ code: 0, stdout: '' });
      expect(passwd.output).toContain(`This changed the in-memory local API running on ${url}`);
      const added = await users(['add', 'alice', '--role', 'viewer'], '');
      expect(added).toMatchObject({ code: 0 });
      const alicePassword = added.stdout.trim();
      expect(alicePassword).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const as = (user: string, password: string) =>
        fetch(`${url}/special-events`, {
          headers: { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
        }).then((response) => response.status);
      expect(await as('alice', alicePassword)).toBe(200);
      expect(await as('admin', 'new-admin-password-1')).toBe(200);
      expect(existsSync(data)).toBe(false); // no lock taken, no DynamoDB Local started on it

      // Two runs: a start on the data directory (its lock, taken here) beside the in-memory one.
      // MUSEUM_IN_MEMORY=1 on the CLI still means the in-memory run (it once said none was running).
      const taken = await lockDataDirectory(data, 'npm start', () => undefined);
      try {
        const listed = await users(['list'], '', { MUSEUM_IN_MEMORY: '1' });
        expect(listed).toMatchObject({ code: 0 });
        expect(listed.stdout).toMatch(/^alice\tviewer\tk1$/m);
      } finally {
        if ('lock' in taken) await taken.lock.release();
      }
    },
    START_TIMEOUT + 60_000,
  );
});

describe('the bundles', () => {
  test(
    'are built by a first start, and a second start on unchanged sources reaches "listening" without building',
    async () => {
      const bundles = await mkdtemp(join(tmpdir(), 'museum-bundles-'));
      try {
        const env = {
          MUSEUM_IN_MEMORY: '1',
          MUSEUM_ADMIN_PASSWORD: 'laptop-admin-password-1',
          MUSEUM_BUNDLES_DIR: bundles,
          MUSEUM_DATA_DIR: await dataDirectory(),
        };
        const first = await startLocalRun(env, { build: true });
        await untilListening(first, START_TIMEOUT);
        expect(first.output()).toMatch(/bundles\s+…\n/);
        expect(first.output()).toMatch(/bundles\s+[\d.]+ s\s+built/);
        process.kill(first.child.pid as number, 'SIGTERM');
        expect(await first.exited).toBe(0);

        const second = await startLocalRun(env, { build: true });
        await untilListening(second, START_TIMEOUT);
        expect(second.output()).toMatch(/bundles\s+[\d.]+ s\s+up to date/);
        expect(second.output()).not.toMatch(/built/);
        process.kill(second.child.pid as number, 'SIGTERM');
        expect(await second.exited).toBe(0);
        // scripts/build.ts stamps the bundles beside their directory (metaFileOf), with the inputs' hash.
        const stamp = JSON.parse(await readFile(`${bundles}.meta.json`, 'utf8')) as { inputsHash?: string };
        expect(stamp.inputsHash).toMatch(/^[0-9a-f]{64}$/);
      } finally {
        await rm(bundles, { recursive: true, force: true });
        await rm(`${bundles}.meta.json`, { force: true });
      }
    },
    2 * START_TIMEOUT + 60_000,
  );
});
