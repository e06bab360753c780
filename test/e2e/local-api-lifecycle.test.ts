// `npm start` as a user runs it: persistent data under the data directory, the generated admin
// password, a clean stop on SIGTERM (DynamoDB Local's Java process too), and the users CLI.
import { jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { basicAuthorization } from '../support/api-client.ts';
import { startLocalApiProcess } from '../support/local-api-process.ts';
import { fetchChecked } from '../support/contract.ts';
import { javaProcessesUsing } from '../support/local-run.ts';
import { testEnvironment } from '../support/test-environment.ts';

// Real processes on a loaded machine: a first start has taken 35 s there. Generous bounds, no timing asserts.
jest.setTimeout(300_000);

const run = promisify(execFile);

const javaCount = (directory: string) => javaProcessesUsing(directory).length;

/** The users CLI; `password` piped on stdin (none: empty input, so a generated password on stdout). */
async function usersCli(dataDirectory: string, args: string[], password?: string) {
  const child = run(process.execPath, ['--import', 'tsx', 'bin/users.ts', ...args], {
    env: { ...process.env, MUSEUM_DATA_DIR: dataDirectory },
  });
  child.child.stdin?.end(password ?? '');
  return child.then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr, stdout }),
    (error: unknown) => {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, output: failed.stdout + failed.stderr, stdout: failed.stdout };
    },
  );
}

describe('the local API started with npm start', () => {
  let dataDirectory: string;

  beforeAll(async () => {
    dataDirectory = await mkdtemp(join(tmpdir(), 'museum-local-api-'));
  });

  test('prints a generated admin password once, keeps data across restarts and stops DynamoDB Local with it', async () => {
    const first = await startLocalApiProcess({ MUSEUM_DATA_DIR: dataDirectory }, join(dataDirectory, 'first.log'));
    let eventId: string;
    let authorization: string;
    try {
      const firstLog = await readFile(join(dataDirectory, 'first.log'), 'utf8');
      const password = /with password: (\S+)/.exec(firstLog)?.[1];
      expect(password).toBeDefined();
      authorization = basicAuthorization('admin', password as string);
      const created = await fetchChecked(first.url, '/special-events', {
        method: 'POST',
        headers: { Authorization: authorization, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Kept', location: 'Hall', eventDescription: 'Survives a restart', dates: ['2033-01-01'], price: 1 }),
      });
      expect(created.status).toBe(201);
      ({ eventId } = created.json() as { eventId: string });
      expect(javaCount(dataDirectory)).toBe(1);
    } finally {
      await first.stop();
    }
    expect(javaCount(dataDirectory)).toBe(0);

    const second = await startLocalApiProcess({ MUSEUM_DATA_DIR: dataDirectory }, join(dataDirectory, 'second.log'));
    try {
      expect(await readFile(join(dataDirectory, 'second.log'), 'utf8')).not.toMatch(/with password/);
      const again = await fetchChecked(second.url, `/special-events/${eventId}`, { headers: { Authorization: authorization } });
      expect(again.status).toBe(200);

      // The users CLI works against the running API's store (and its credential key), and the new user can log in.
      const added = await usersCli(dataDirectory, ['add', 'curator', '--role', 'viewer']);
      expect(added.code).toBe(0);
      expect(added.stdout).toMatch(/^[A-Za-z0-9_-]{32}\n$/);
      expect((await usersCli(dataDirectory, ['add', 'curator', '--role', 'viewer'], 'curator-password-of-twenty\n')).code).toBe(1);
      expect((await usersCli(dataDirectory, ['add', 'shorty', '--role', 'viewer'], 'too-short\n')).output).toMatch(/at least 20/);
      expect((await usersCli(dataDirectory, ['list'])).output).toMatch(
        /admin\teditor\tk1[\s\S]*curator\tviewer\tk1|curator\tviewer\tk1[\s\S]*admin\teditor\tk1/,
      );
      const asCurator = await fetchChecked(second.url, `/special-events/${eventId}`, {
        headers: { Authorization: basicAuthorization('curator', added.stdout.trim()) },
      });
      expect(asCurator.status).toBe(200);
      // Both say how long clients that already logged in keep access.
      const passwd = await usersCli(dataDirectory, ['passwd', 'curator'], 'curator-password-of-twenty\n');
      expect(passwd.code).toBe(0);
      expect(passwd.stdout).toBe('');
      expect(passwd.output).toMatch(/up to 5 minutes/);
      const remove = await usersCli(dataDirectory, ['remove', 'curator']);
      expect(remove.code).toBe(0);
      expect(remove.output).toMatch(/up to 5 minutes/);
      expect((await usersCli(dataDirectory, ['list'])).output).not.toMatch(/curator/);
    } finally {
      await second.stop();
    }
    expect(javaCount(dataDirectory)).toBe(0);
  });

  test('the users CLI works on the stored data when the API is not running, and leaves no Java behind', async () => {
    expect((await usersCli(dataDirectory, ['add', 'offline', '--role', 'editor'], 'offline-password-of-twenty\n')).code).toBe(0);
    expect((await usersCli(dataDirectory, ['list'])).output).toMatch(/offline\teditor/);
    expect(javaCount(dataDirectory)).toBe(0);
  });
});

describe('the generated password', () => {
  test('is changed by exactly the command the start advises, on DYNAMODB_ENDPOINT too', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'museum-advice-'));
    const table = `museum-advice-${directory.slice(-6).replace(/[^A-Za-z0-9]/g, 'x')}`;
    const env = { DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint, TABLE_NAME: table, MUSEUM_DATA_DIR: join(directory, 'data') };
    const api = await startLocalApiProcess(env, join(directory, 'start.log'));
    try {
      const log = await readFile(join(directory, 'start.log'), 'utf8');
      const advised = /change it with: (.+), with the same (.+)\)$/m.exec(log);
      expect(advised?.[1]).toBe(`DYNAMODB_ENDPOINT=${env.DYNAMODB_ENDPOINT} npm run -s users -- passwd admin`);
      expect(advised?.[2]).toContain('TABLE_NAME');
      expect(advised?.[2]).toContain('MUSEUM_DATA_DIR');
      // As advised: the endpoint on the command line, the named settings as they were; a new password on stdout.
      const child = run('sh', ['-c', advised?.[1] as string], {
        env: { ...process.env, TABLE_NAME: table, MUSEUM_DATA_DIR: env.MUSEUM_DATA_DIR },
      });
      child.child.stdin?.end();
      const { stdout } = await child;
      const asAdmin = await fetchChecked(api.url, '/special-events', {
        headers: { Authorization: basicAuthorization('admin', stdout.trim()) },
      });
      expect(asAdmin.status).toBe(200);
    } finally {
      await api.stop();
    }
  });
});
