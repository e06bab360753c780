// Logins during a flood of wrong passwords, against the local API (`bin/local-api.ts` with the
// deployed method throttling, the authorizer in its own execution environments, on its own
// DynamoDB Local). The flood: 20 clients that never honour Retry-After, all on the list method:
// 10 send distinct wrong passwords for a real user, 5 random unknown users, 5 one wrong password
// repeated; at least 300 requests, and on until the valid logins are done. Meanwhile 10 users never
// seen before log in on another method (GET of an event), one after another or all at once, with
// the client's documented retry (Retry-After on 429 and 503). Reports per scenario how many valid
// logins got in, after how many attempts and how long, and what the flood was answered (429 is the
// method's throttle, before the authorizer). Target (docs/RELIABILITY.md, "Brute force"): every
// valid login gets in, and the authorizer is never throttled (no 503 from its reserved concurrency).
//   npm run bench:flood [-- --repetitions 3]   (an npm script, so that it runs on the node@24 devDependency)
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { hashCredential } from '../../functions/auth/credentials.ts';
import { credentialKeysFileIn, ensureCredentialKeysFile, readCredentialKeysFile } from '../../lib/local/credential-keys-file.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { freePort, localClient, startDynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import { ensureLocalTables, LOCAL_TABLE_NAMES } from '../../lib/local/local-tables.ts';
import { resendWaitMs } from '../support/resend-rule.ts';

const FLOOD_CLIENTS = 20;
/** What a valid login sends again after Retry-After: the method's throttle and the authorizer's 503. */
const LOGIN_RESENT_STATUSES: ReadonlySet<number> = new Set([429, 503]);
const FLOOD_REQUESTS = 300;
const VALID_LOGINS = 10;
const FLOODED = '/special-events?startDate=9970-01-01&endDate=9970-01-01';
const UNFLOODED = `/special-events/${randomUUID()}`;
/** Past the authorizer: the event does not exist (404). */
const IN = 404;

const { values } = parseArgs({ options: { repetitions: { type: 'string', default: '3' } } });
const repetitions = Number(values.repetitions);

const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

const work = await mkdtemp(join(tmpdir(), 'museum-bench-flood-'));
const dynamodb = await startDynamoDbLocal();
let api: ReturnType<typeof spawn> | undefined;
try {
  await ensureLocalTables(dynamodb.endpoint, LOCAL_TABLE_NAMES);
  const client = localClient(dynamodb.endpoint);
  const store = new UsersStore(createDocumentClient(client), LOCAL_TABLE_NAMES.events);
  // The local API's credential key (on DYNAMODB_ENDPOINT, in its data directory), made here first to hash the users with.
  const keysFile = credentialKeysFileIn(join(work, 'data'));
  await ensureCredentialKeysFile(keysFile);
  const keys = await readCredentialKeysFile(keysFile);
  const hashPassword = (password: string) => hashCredential(password, keys);
  const victim = { username: 'curator', password: `curator-${randomUUID()}` };
  await store.putUser({ ...victim, role: 'editor', passwordHash: hashPassword(victim.password) }, 'create');
  const repeatedUser = { username: 'visitor', password: `visitor-${randomUUID()}` };
  await store.putUser({ ...repeatedUser, role: 'viewer', passwordHash: hashPassword(repeatedUser.password) }, 'create');

  const port = await freePort();
  api = spawn(process.execPath, ['--import', 'tsx', 'bin/local-api.ts'], {
    env: { ...process.env, PORT: String(port), DYNAMODB_ENDPOINT: dynamodb.endpoint, MUSEUM_DATA_DIR: join(work, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Its log (a line per turned-away request) goes to a file, not the report.
  const logFile = join(work, 'local-api.log');
  api.stderr?.pipe(createWriteStream(logFile));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    api?.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    api?.once('exit', (code) => reject(new Error(`the local API exited with ${code}`)));
  });
  api.stdout?.resume();

  const login = async (authorization: string, path = FLOODED) => {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, { headers: { Authorization: authorization } });
    await response.arrayBuffer();
    return { status: response.status, headers: response.headers, ms: performance.now() - started };
  };
  /** The client's documented retry (resend-rule.ts): 429 and 503 again after Retry-After, at most 20 attempts. */
  const loginWithRetry = async (authorization: string) => {
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      const answer = await login(authorization, UNFLOODED);
      const wait = resendWaitMs('GET', answer, LOGIN_RESENT_STATUSES);
      if (wait === undefined || attempt === 20) return { status: answer.status, attempts: attempt, ms: performance.now() - started };
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
  const freshUsers = () =>
    Promise.all(
      Array.from({ length: VALID_LOGINS }, async () => {
        const user = { username: `fresh-${randomUUID().slice(0, 8)}`, password: `valid-${randomUUID()}` };
        await store.putUser({ ...user, role: 'viewer', passwordHash: hashPassword(user.password) }, 'create');
        return user;
      }),
    );

  async function scenario(arrival: 'one after another' | 'all at once', flood: boolean) {
    const users = await freshUsers();
    let sent = 0;
    let validDone = false;
    const floodStatuses: number[] = [];
    const attackers = flood
      ? Array.from({ length: FLOOD_CLIENTS }, async (_, client) => {
          while (sent < FLOOD_REQUESTS || !validDone) {
            sent++;
            const header =
              client < 10
                ? basic(victim.username, `guess-${randomUUID()}`)
                : client < 15
                  ? basic(`nobody-${randomUUID().slice(0, 12)}`, 'guess')
                  : basic(repeatedUser.username, 'the-same-wrong-password');
            floodStatuses.push((await login(header)).status);
            await new Promise((resolve) => setTimeout(resolve, 20)); // far over the method's limit, without spinning this process
          }
        })
      : [];
    if (flood) while (sent < 2 * FLOOD_CLIENTS) await new Promise((resolve) => setTimeout(resolve, 10));
    const valid: { status: number; attempts: number; ms: number }[] = [];
    if (arrival === 'all at once')
      valid.push(...(await Promise.all(users.map((user) => loginWithRetry(basic(user.username, user.password))))));
    else for (const user of users) valid.push(await loginWithRetry(basic(user.username, user.password)));
    validDone = true;
    await Promise.all(attackers);
    const ok = valid
      .filter((answer) => answer.status === IN)
      .map((answer) => answer.ms)
      .sort((a, b) => a - b);
    return {
      arrival,
      flood,
      validIn: ok.length,
      maxAttempts: Math.max(...valid.map((answer) => answer.attempts)),
      validOther: valid.filter((answer) => answer.status !== IN).map((answer) => answer.status),
      p50Ms: Math.round(percentile(ok, 50)),
      p90Ms: Math.round(percentile(ok, 90)),
      maxMs: Math.round(ok.at(-1) ?? Number.NaN),
      floodRequests: floodStatuses.length,
      flood401: floodStatuses.filter((status) => status === 401).length,
      flood429: floodStatuses.filter((status) => status === 429).length,
      flood503: floodStatuses.filter((status) => status === 503).length,
      floodOther: floodStatuses.filter((status) => ![401, 429, 503].includes(status)).length,
    };
  }

  // A first login warms the authorizer up (bundle load, key read, first lookup); not measured.
  await login(basic(repeatedUser.username, repeatedUser.password));
  const rows = [];
  for (let repetition = 1; repetition <= repetitions; repetition++) {
    for (const [arrival, flood] of [
      ['one after another', false],
      ['one after another', true],
      ['all at once', false],
      ['all at once', true],
    ] as const) {
      const row = { repetition, ...(await scenario(arrival, flood)) };
      rows.push(row);
      console.error(JSON.stringify(row));
    }
  }
  console.log('| valid logins | flood | got in (of 10) | most attempts | p50 / p90 / max ms | flood requests: 401 / 429 / 503 / other |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) {
    console.log(
      `| ${row.arrival} | ${row.flood ? 'yes' : 'no'} | ${row.validIn} | ${row.maxAttempts} | ${row.p50Ms} / ${row.p90Ms} / ${row.maxMs} | ${row.flood ? `${row.floodRequests}: ${row.flood401} / ${row.flood429} / ${row.flood503} / ${row.floodOther}` : '-'} |`,
    );
  }
  client.destroy();
} finally {
  if (api?.exitCode === null) {
    const exited = new Promise((resolve) => api?.once('exit', resolve));
    api.kill('SIGTERM');
    await exited;
  }
  await dynamodb.stop();
  await rm(work, { recursive: true, force: true });
}
