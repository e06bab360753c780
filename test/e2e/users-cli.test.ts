// The users CLI's output contract, as scripts and CI use it: a generated password is the one line of
// standard output (empty input, or a terminal), a chosen one must have 20 characters, a repeated or
// unknown option is refused in one line, and `migrate` re-issues users an older release stored with
// scrypt. Against the tests' DynamoDB Local and credential key, so every password is tried on the API.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { keys } from '../../functions/store/table-definition.ts';
import { apiRetrying } from '../support/api-client.ts';
import { withTestCredentialKeys } from '../support/local-api-process.ts';
import { testEnvironment } from '../support/test-environment.ts';
import { closeTableClient, tableClient } from '../reliability/stored-items.ts';

let work: string;
let dataDirectory: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'museum-users-cli-'));
  dataDirectory = await withTestCredentialKeys(join(work, 'data'));
});
afterAll(async () => {
  closeTableClient();
  await rm(work, { recursive: true, force: true });
});

const users = () => new UsersStore(tableClient(), testEnvironment().tableName);
const cliEnvironment = () => ({ ...process.env, DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint, MUSEUM_DATA_DIR: dataDirectory });
const name = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI with `input` piped on stdin (undefined: stdin is /dev/null). */
function usersCli(args: string[], input?: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'bin/users.ts', ...args],
      { env: cliEnvironment(), timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    if (input === undefined) child.stdin?.destroy();
    else child.stdin?.end(input);
  });
}

/** The CLI on a real pseudo-terminal (util-linux `script`), its stderr dropped: what a person at a terminal sees on stdout. */
function usersCliOnTerminal(args: string[]): Promise<Outcome> {
  const command = ['node', '--import', 'tsx', 'bin/users.ts', ...args].map((arg) => `'${arg}'`).join(' ');
  return new Promise((resolve) => {
    const child = execFile(
      'script',
      ['-qec', `${command} 2>/dev/null`, '/dev/null'],
      { env: cliEnvironment(), timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

const logsIn = async (username: string, password: string) =>
  (await apiRetrying('GET', '/special-events?startDate=9981-01-01&endDate=9981-01-01', { as: { username, password } })).status;

describe('a generated password', () => {
  test('add with empty input (< /dev/null) prints exactly one line on stdout: the password, which logs in', async () => {
    const username = name('gen');
    const { code, stdout, stderr } = await usersCli(['add', username, '--role', 'viewer']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^[A-Za-z0-9_-]{32}\n$/);
    expect(stderr).toContain(`Added ${username} (viewer)`);
    expect(stderr).not.toContain(stdout.trim());
    expect(await logsIn(username, stdout.trim())).toBe(200);
  });

  test('add on a terminal prints the one line too, without a prompt', async () => {
    const username = name('tty');
    const { code, stdout } = await usersCliOnTerminal(['add', username, '--role', 'viewer']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^[A-Za-z0-9_-]{32}\r\n$/);
    expect(await logsIn(username, stdout.trim())).toBe(200);
  });

  test('passwd without input prints a new one the same way; the old one no longer logs in', async () => {
    const username = name('again');
    const first = (await usersCli(['add', username, '--role', 'viewer'])).stdout.trim();
    const { code, stdout } = await usersCli(['passwd', username], '');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^[A-Za-z0-9_-]{32}\n$/);
    expect(stdout.trim()).not.toBe(first);
    expect(await logsIn(username, stdout.trim())).toBe(200);
  });
});

describe('a chosen password (on stdin)', () => {
  test('of 19 characters is refused by add and by passwd with one sentence, and changes nothing', async () => {
    const username = name('short');
    const refusedAdd = await usersCli(['add', username, '--role', 'viewer'], `${'x'.repeat(19)}\n`);
    expect(refusedAdd).toEqual({
      code: 1,
      stdout: '',
      stderr: 'A chosen password must have at least 20 characters (this one has 19); leave it out to get a generated one.\n',
    });
    expect(await users().getUser(username)).toBeUndefined();
    const password = (await usersCli(['add', username, '--role', 'viewer'])).stdout.trim();
    const refusedPasswd = await usersCli(['passwd', username], 'nineteen-characters');
    expect(refusedPasswd.code).toBe(1);
    expect(refusedPasswd.stderr.trim().split('\n')).toHaveLength(1);
    expect(await logsIn(username, password)).toBe(200);
  });

  test('of 20 characters is taken as given, and nothing is printed on stdout', async () => {
    const username = name('chosen');
    const chosen = `c${randomUUID().slice(0, 19)}`;
    const { code, stdout } = await usersCli(['add', username, '--role', 'editor'], `${chosen}\n`);
    expect({ code, stdout }).toEqual({ code: 0, stdout: '' });
    expect(await logsIn(username, chosen)).toBe(200);
  });
});

describe('options', () => {
  test.each([
    [['add', 'x', '--role', 'editor', '--role', 'viewer'], '--role is given more than once: give it once.'],
    [['add', 'x', '--role=viewer', '--role', 'editor'], '--role is given more than once: give it once.'],
    [['list', '--table', 't', '--table', 'u'], '--table is given more than once: give it once.'],
    [['add', 'x', '--rol', 'viewer'], 'Unknown option --rol: npm run users -- --help lists them.'],
    [['list', '-x'], 'Unknown option -x: npm run users -- --help lists them.'],
    [['add', 'x', '--role'], '--role needs a value: npm run users -- --help lists them.'],
  ])('%j is refused with one line naming the option, before anything starts', async (args, line) => {
    const { code, stdout, stderr } = await usersCli(args, '');
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: `${line}\n` });
    expect(await users().getUser('x')).toBeUndefined();
  });

  test('--table without --secret is refused for the commands that issue credentials', async () => {
    const { code, stderr } = await usersCli(['add', 'x', '--role', 'viewer', '--table', 'museum-events']);
    expect(code).toBe(2);
    expect(stderr).toBe("add --table needs --secret <arn|name>: the stack's output CredentialKeysSecretArn.\n");
  });
});

describe('migrate', () => {
  test('re-issues the users an older release stored with scrypt (list marks them), once; the new passwords log in', async () => {
    const older = [name('scrypt'), name('scrypt')];
    // As the scrypt release stored a user: one item in the USERS partition, holding the hash.
    const scryptHash = `scrypt$131072$8$1$${Buffer.alloc(16, 1).toString('base64')}$${Buffer.alloc(32, 2).toString('base64')}`;
    for (const [index, username] of older.entries()) {
      await tableClient().send(
        new PutCommand({
          TableName: testEnvironment().tableName,
          Item: { ...keys.userDirectoryEntry(username), username, role: index === 0 ? 'editor' : 'viewer', passwordHash: scryptHash },
        }),
      );
    }
    const before = await usersCli(['list']);
    for (const username of older) expect(before.stdout).toMatch(new RegExp(`^${username}\\t(editor|viewer)\\tscrypt: migrate$`, 'm'));
    // Nothing logs in with them: the authorizer never runs scrypt.
    expect(await users().getUser(older[0] as string)).toBeUndefined();

    const migrated = await usersCli(['migrate']);
    expect(migrated.code).toBe(0);
    const lines = migrated.stdout.trim().split('\n');
    const issued = new Map(lines.map((line) => line.split('\t') as [string, string]));
    for (const username of older) {
      expect(issued.get(username)).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(await logsIn(username, issued.get(username) as string)).toBe(200);
    }
    expect((await users().getUser(older[0] as string))?.role).toBe('editor');
    const after = await usersCli(['list']);
    for (const username of older) expect(after.stdout).toMatch(new RegExp(`^${username}\\t(editor|viewer)\\tk1$`, 'm'));
    // Done users are not listed again.
    const again = await usersCli(['migrate']);
    for (const username of older) expect(again.stdout).not.toContain(username);
  });
});
