// Authentication and response hardening: usernames do not leak through what a login costs, credentials never
// reach a log, the users CLI refuses short chosen passwords and passwords with control or invisible
// characters, a password never matches with such characters appended, usernames are compared exactly, repeated Authorization headers cannot borrow
// another user's cached policy, and every response is marked nosniff / no-store with an
// allow-list-only CORS policy.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BasicAuthenticator } from '../../functions/auth/basic-auth.ts';
import { hashCredential, MIN_CHOSEN_CREDENTIAL_LENGTH, type CredentialKeys } from '../../functions/auth/credentials.ts';
import { UsersStore, type User } from '../../functions/auth/users-store.ts';
import { readCredentialKeysFile } from '../../lib/local/credential-keys-file.ts';
import { api, apiRetrying, basicAuthorization, createEvent } from '../support/api-client.ts';
import { LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, withTestCredentialKeys, type OwnLocalApi } from '../support/local-api-process.ts';
import { TEST_USERS, testCredentialHash, testEnvironment } from '../support/test-environment.ts';
import { recordFigures } from './figures.ts';
import { closeTableClient, tableClient } from './stored-items.ts';
import { fetchChecked } from '../support/contract.ts';

afterAll(() => closeTableClient());

const users = () => new UsersStore(tableClient(), testEnvironment().tableName);
/** The tests' credential keys, as the authorizer's key source gives them (read from the global setup's key file here). */
const testKeys = (): Promise<CredentialKeys> => readCredentialKeysFile(process.env.TEST_CREDENTIAL_KEYS_FILE ?? '');

async function freshUser(role: 'viewer' | 'editor') {
  const user = { username: `${role}-${randomUUID().slice(0, 8)}`, password: `password-${randomUUID()}` };
  await users().putUser({ ...user, role, passwordHash: await testCredentialHash(user.password) }, 'create');
  return user;
}

/** The users store, counting the authorizer's lookups (test-only: measures what a login costs in reads). */
class CountingUsersStore extends UsersStore {
  lookups = 0;
  override getUser(username: string): Promise<User | undefined> {
    this.lookups++;
    return super.getUser(username);
  }
}

/** One request with exactly these Authorization headers (fetch would merge repeated ones). */
function requestWithAuthorizations(method: string, path: string, authorizations: string[], body?: string): Promise<number> {
  const url = new URL(`${testEnvironment().url}${path}`);
  const headers = [['Host', url.host], ...authorizations.map((value) => ['Authorization', value])];
  if (body) headers.push(['Content-Type', 'application/json']);
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: url.hostname, port: url.port, method, path: url.pathname, headers: headers.flat() }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

/** The CPU time (user and system, every thread of this process) one login costs the authorizer's code. */
async function cpuMsOfLogin(authenticator: BasicAuthenticator, authorization: string): Promise<number> {
  const before = process.cpuUsage();
  expect(await authenticator.authenticate(authorization)).toBeUndefined();
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000;
}

describe('authentication timing', () => {
  test('an unknown user costs as much as a wrong password for a known user (no username oracle)', async () => {
    // The authorizer's own code (BasicAuthenticator on DynamoDB Local), measured in CPU time, not
    // wall-clock: the work a login costs is what a timing attacker sees on an idle authorizer, and
    // unlike elapsed time it does not grow with whatever else runs on this machine. Fresh
    // credentials every time (nothing from a cache), interleaved.
    const authenticator = new BasicAuthenticator(users(), testKeys);
    await cpuMsOfLogin(authenticator, basicAuthorization(TEST_USERS.editor.username, `warm-up-${randomUUID()}`));
    const unknown: number[] = [];
    const wrongPassword: number[] = [];
    const malformed: number[] = [];
    // A login is a GetItem and a MAC (well under a millisecond of CPU): many samples for a stable median.
    for (let i = 0; i < 61; i++) {
      unknown.push(await cpuMsOfLogin(authenticator, basicAuthorization(`nobody-${randomUUID().slice(0, 8)}`, `guess-${randomUUID()}`)));
      wrongPassword.push(await cpuMsOfLogin(authenticator, basicAuthorization(TEST_USERS.editor.username, `guess-${randomUUID()}`)));
      malformed.push(await cpuMsOfLogin(authenticator, `Basic ${Buffer.from(`no colon ${i}`).toString('base64')}`));
    }
    const [u, w, m] = [median(unknown), median(wrongPassword), median(malformed)];
    recordFigures('auth-cost', {
      unknownUserMedianCpuMs: Math.round(u * 1000) / 1000,
      wrongPasswordMedianCpuMs: Math.round(w * 1000) / 1000,
      malformedHeaderMedianCpuMs: Math.round(m * 1000) / 1000,
      samples: unknown.length,
    });
    // Within noise of each other...
    expect(u / w).toBeGreaterThan(0.7);
    expect(u / w).toBeLessThan(1.43);
    // ...while the measurement can see a missing check: a header that is not Basic credentials
    // costs no lookup and no MAC at all.
    expect(m).toBeLessThan(0.5 * Math.min(u, w));
    // Through the local API the three are alike too: 401, nothing else.
    const statuses = [
      basicAuthorization(`nobody-${randomUUID().slice(0, 8)}`, `guess-${randomUUID()}`),
      basicAuthorization(TEST_USERS.editor.username, `guess-${randomUUID()}`),
      `Basic ${Buffer.from('no colon').toString('base64')}`,
    ].map((header) => apiRetrying('GET', '/special-events', { as: { header } }).then((response) => response.status));
    expect(await Promise.all(statuses)).toEqual([401, 401, 401]);
  }, 300_000);
});

describe('logs', () => {
  test('no line of the local API log contains an Authorization header value or a password', async () => {
    const { logFile } = testEnvironment();
    const wrong = `wrong-Secret-${randomUUID()}`;
    const unknownPassword = `unknown-Secret-${randomUUID()}`;
    const headers = [
      basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password),
      basicAuthorization(TEST_USERS.viewer.username, TEST_USERS.viewer.password),
      basicAuthorization(TEST_USERS.editor.username, wrong),
      basicAuthorization(`nobody-${randomUUID().slice(0, 8)}`, unknownPassword),
      `Basic ${wrong}`,
      `Bearer ${unknownPassword}`,
    ];
    for (const header of headers) {
      await api('GET', '/special-events', { as: { header } });
      await api('POST', '/special-events', { as: { header }, rawBody: '{"broken', headers: { 'Content-Type': 'application/json' } });
    }
    // A marker request, to know the log has caught up with everything above.
    const marker = randomUUID();
    await api('GET', `/special-events/${marker}`);
    let log = '';
    for (let waited = 0; waited < 5_000 && !log.includes(marker); waited += 100) {
      await sleep(100);
      log = await readFile(logFile, 'utf8');
    }
    expect(log).toContain(marker);
    const secrets = [
      ...headers,
      ...headers.map((header) => header.replace(/^\w+ /, '')),
      TEST_USERS.editor.password,
      TEST_USERS.viewer.password,
      wrong,
      unknownPassword,
    ];
    for (const secret of secrets) expect(log).not.toContain(secret);
    expect(log).not.toMatch(/basic [A-Za-z0-9+/=]{8,}/i);
  });
});

describe('the users CLI', () => {
  let dataDirectory: string;
  beforeAll(async () => {
    dataDirectory = await withTestCredentialKeys(join(await mkdtemp(join(tmpdir(), 'museum-users-cli-')), 'data'));
  });
  afterAll(() => rm(join(dataDirectory, '..'), { recursive: true, force: true }));

  /** `npm run users -- add <name> --role viewer`, the password piped to stdin, against the test DynamoDB Local (and its key). */
  function addUser(username: string, password: string): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'bin/users.ts', 'add', username, '--role', 'viewer'], {
        env: { ...process.env, DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint, MUSEUM_DATA_DIR: dataDirectory },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      // Stopped before the test's own timeout, so that a hung CLI never outlives the test.
      const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // 'close', not 'exit': at 'exit' the child's output may still be unread.
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
      child.stdin.end(`${password}\n`);
    });
  }

  test(`refuses chosen passwords under ${MIN_CHOSEN_CREDENTIAL_LENGTH} characters (counted as characters, not UTF-16 units) with one sentence, and creates no user`, async () => {
    const short = { username: `short-${randomUUID().slice(0, 8)}`, password: 'nineteen-characters' };
    const emoji = { username: `emoji-${randomUUID().slice(0, 8)}`, password: '🦕'.repeat(MIN_CHOSEN_CREDENTIAL_LENGTH - 1) };
    const results = await Promise.all([addUser(short.username, short.password), addUser(emoji.username, emoji.password)]);
    for (const [i, { code, output }] of results.entries()) {
      expect(code).toBe(1);
      expect(output).toBe(
        `A chosen password must have at least ${MIN_CHOSEN_CREDENTIAL_LENGTH} characters (this one has 19); leave it out to get a generated one.\n`,
      );
      expect(await users().getUser([short, emoji][i]?.username as string)).toBeUndefined();
    }
  });

  test('refuses a password with a control or invisible character (NUL, tab, DEL, C1, BOM, zero-width space) and creates no user', async () => {
    const passwords = [
      'long-enough-password\u0000',
      'long-enough\tpassword',
      'long-enough-password\u007f',
      'long-enough-password\u0085',
      '\ufefflong-enough-password',
      'long-enough\u200bpassword',
    ];
    const named = passwords.map((password) => ({ username: `ctl-${randomUUID().slice(0, 8)}`, password }));
    const results = await Promise.all(named.map((user) => addUser(user.username, user.password)));
    for (const [i, { code, output }] of results.entries()) {
      expect(code).toBe(1);
      expect(output).toContain('control or invisible');
      expect(output).not.toContain(named[i]?.password as string);
      expect(await users().getUser(named[i]?.username as string)).toBeUndefined();
    }
  });

  test(`accepts ${MIN_CHOSEN_CREDENTIAL_LENGTH} characters, never prints a chosen password, and the user logs in with it`, async () => {
    const user = { username: `long-${randomUUID().slice(0, 8)}`, password: `x${randomUUID().slice(0, MIN_CHOSEN_CREDENTIAL_LENGTH - 1)}` };
    const { code, output } = await addUser(user.username, user.password);
    expect(code).toBe(0);
    expect(output).not.toContain(user.password);
    expect((await users().getUser(user.username))?.role).toBe('viewer');
    expect((await apiRetrying('GET', '/special-events', { as: user })).status).toBe(200);
  });
});

describe('credential rules', () => {
  const encodedHeader = (bytes: Buffer) => `Basic ${bytes.toString('base64')}`;

  test('a password followed by NUL bytes, or holding another control or invisible character, never logs in', async () => {
    const { username, password } = TEST_USERS.editor;
    expect((await api('GET', '/special-events?startDate=9980-05-05&endDate=9980-05-05', { as: TEST_USERS.editor })).status).toBe(200);
    // A MAC would tell these from the right password, but none of them could ever have been set.
    for (const presented of [
      `${password}\u0000`,
      `${password}\u0000\u0000\u0000\u0000`,
      `\ufeff${password}`,
      `${password}\u200b`,
      `${password}\u007f`,
      `${password}\u0085`,
    ]) {
      const response = await api('GET', '/special-events?startDate=9980-05-05&endDate=9980-05-05', {
        as: { header: basicAuthorization(username, presented) },
      });
      expect(response.status).toBe(401);
    }
  });

  test('the username is compared exactly: a BOM before it, an invisible character in it, another Unicode form of it name no user', async () => {
    const { username, password } = TEST_USERS.editor;
    const headers = [
      // A UTF-8 BOM at the start of the decoded credentials (a decoder that drops it would see `admin`).
      encodedHeader(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`${username}:${password}`)])),
      basicAuthorization(`\ufeff${username}`, password),
      basicAuthorization(`${username.slice(0, 2)}\u200b${username.slice(2)}`, password),
      basicAuthorization(`${username}\u00ad`, password),
      basicAuthorization(username.toUpperCase(), password),
      basicAuthorization(
        Array.from(username)
          .map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0))
          .join(''),
        password,
      ), // fullwidth
      basicAuthorization(`${username}\u0000`, password),
    ];
    for (const header of headers)
      expect((await api('GET', '/special-events?startDate=9980-05-05&endDate=9980-05-05', { as: { header } })).status).toBe(401);
  });

  test('every check is one lookup of the user, with nothing remembered; an impossible password costs none', async () => {
    // One authenticator is one execution environment; its keys come from the key file here (in the
    // API, through the Secrets Manager stand-in: test/unit/secrets-manager-stand-in.test.ts).
    const store = new CountingUsersStore(tableClient(), testEnvironment().tableName);
    const authenticator = new BasicAuthenticator(store, testKeys);
    const user = await freshUser('viewer');
    const wrong = basicAuthorization(user.username, `${user.password}-not`);
    for (let i = 0; i < 3; i++) expect(await authenticator.authenticate(wrong)).toBeUndefined();
    expect(store.lookups).toBe(3);
    // Unknown users alike (nothing tells them apart from a wrong password).
    expect(await authenticator.authenticate(basicAuthorization(`nobody-${randomUUID().slice(0, 8)}`, 'some-password-1'))).toBeUndefined();
    expect(store.lookups).toBe(4);
    // A password that could never have been set is refused before any lookup.
    expect(await authenticator.authenticate(basicAuthorization(user.username, `${user.password}\u0000`))).toBeUndefined();
    expect(store.lookups).toBe(4);
    // The right password, just after wrong ones, gets in; and a removed user is refused at the next check.
    expect(await authenticator.authenticate(basicAuthorization(user.username, user.password))).toEqual({
      username: user.username,
      role: 'viewer',
    });
    await users().deleteUser(user.username);
    expect(await authenticator.authenticate(basicAuthorization(user.username, user.password))).toBeUndefined();
    expect(store.lookups).toBe(6);
  }, 60_000);

  test('the users store refuses a username outside the exact set, and a hash not made by hashCredential', async () => {
    const passwordHash = hashCredential(`password-${randomUUID()}`, await testKeys());
    for (const username of ['\ufeffbom-user', 'zero\u200bwidth', 'ren\u00e9', 'a'.repeat(65), '']) {
      await expect(users().putUser({ username, role: 'viewer', passwordHash }, 'create')).rejects.toThrow(/username/);
      expect(await users().getUser(username || 'x')).toBeUndefined();
    }
    await expect(
      users().putUser({ username: `plain-${randomUUID().slice(0, 8)}`, role: 'viewer', passwordHash: 'correct-horse-battery' }, 'create'),
    ).rejects.toThrow(/hash/);
  });
});

describe('repeated Authorization headers', () => {
  test("the last one counts, and a viewer's header never inherits an editor's cached policy", async () => {
    const viewer = await freshUser('viewer');
    const viewerHeader = basicAuthorization(viewer.username, viewer.password);
    const editorHeader = basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password);
    const event = JSON.stringify({ name: 'Borrowed', location: 'Hall', eventDescription: 'x', dates: ['9980-02-02'], price: 1 });

    // Viewer first, editor last: the editor's credentials are checked (and cached under the editor's header).
    expect(await requestWithAuthorizations('POST', '/special-events', [viewerHeader, editorHeader], event)).toBe(201);
    // The viewer's header alone is still only a viewer.
    expect(await requestWithAuthorizations('POST', '/special-events', [viewerHeader], event)).toBe(403);
    // Editor first, viewer last: a viewer.
    expect(await requestWithAuthorizations('POST', '/special-events', [editorHeader, viewerHeader], event)).toBe(403);
  });
});

describe('response hardening', () => {
  const allowed = 'https://tickets.example';
  let corsApi: OwnLocalApi;

  beforeAll(async () => {
    corsApi = await startOwnLocalApi('cors', { MUSEUM_ADMIN_PASSWORD: TEST_USERS.editor.password, CORS_ALLOWED_ORIGINS: allowed });
  }, LOCAL_API_START_TIMEOUT_MS + 30_000);
  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
    await corsApi?.stop();
  });

  test('every answer, success, problem or gateway response, is nosniff, and no-store but for the private, no-cache GETs', async () => {
    const event = await createEvent({ dates: ['9980-03-03'] });
    const answers = [
      await api('GET', `/special-events/${event.eventId}`),
      await api('GET', '/special-events?startDate=9980-03-03&endDate=9980-03-03'),
      await api('PATCH', `/special-events/${event.eventId}`, { json: { price: 3 } }),
      await api('GET', '/special-events/not-a-uuid'),
      await api('GET', '/special-events', { as: 'none' }),
      await api('POST', '/special-events', { as: 'viewer', json: {} }),
      await api('PUT', '/special-events'),
      await api('DELETE', `/special-events/${event.eventId}`),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 400, 401, 403, 405, 204]);
    for (const [index, answer] of answers.entries()) {
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      // A GET's 200 may be kept by the client but must be revalidated, and never by a shared cache (README "Caching").
      expect(answer.headers.get('cache-control')).toBe(index < 2 ? 'private, no-cache' : 'no-store');
    }
  });

  test('CORS answers only allow-listed origins, by name, never * and never with credentials', async () => {
    const authorization = basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password);
    const cors = async (origin: string, method = 'GET') => {
      const path = '/special-events?startDate=9980-03-03';
      const init = {
        method,
        headers:
          method === 'OPTIONS'
            ? { Origin: origin, 'Access-Control-Request-Method': 'PATCH' }
            : { Origin: origin, Authorization: authorization },
      };
      // A preflight is answered by the gateway and is not an operation of the contract.
      if (method === 'OPTIONS') {
        const response = await fetch(`${corsApi.url}${path}`, init);
        await response.arrayBuffer();
        return response.headers;
      }
      return (await fetchChecked(corsApi.url, path, init)).headers;
    };
    for (const method of ['GET', 'OPTIONS']) {
      const good = await cors(allowed, method);
      expect(good.get('access-control-allow-origin')).toBe(allowed);
      expect(good.get('access-control-allow-credentials')).toBeNull();
      for (const origin of ['https://evil.example', 'null', `${allowed}.evil.example`, 'http://tickets.example']) {
        const bad = await cors(origin, method);
        expect(bad.get('access-control-allow-origin')).toBeNull();
        expect(bad.get('access-control-allow-credentials')).toBeNull();
      }
    }
  });
});
