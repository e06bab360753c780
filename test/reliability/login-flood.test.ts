// Logins an attacker cannot starve (docs/RELIABILITY.md, "Brute force"): during a flood of wrong
// credentials from 20 concurrent clients that never wait (distinct wrong passwords for a real user,
// random unknown users, and one wrong password repeated), fresh valid logins of other users still
// get in. Asserted: what each side may be answered (401 or the documented 503 with Retry-After for
// the flood; 200 or that 503 for the valid logins, at least 90 % of them 200), not how fast; the
// latencies go to the figures (and bench/authorizer/flood.ts measures them on an idle machine).
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPassword } from '../../functions/auth/passwords.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { basicAuthorization } from '../support/api-client.ts';
import { LOCAL_API_START_TIMEOUT_MS, startLocalApiProcess, type LocalApiProcess } from '../support/local-api-process.ts';
import { TEST_USERS, testEnvironment } from '../support/test-environment.ts';
import { recordFigures } from './figures.ts';
import { closeTableClient, tableClient } from './stored-items.ts';

const FLOOD_CLIENTS = 20;
const FLOOD_REQUESTS = 300;
const VALID_LOGINS = 10;

let flooded: LocalApiProcess | undefined;
let work: string | undefined;

beforeAll(async () => {
  // Its own gateway and authorizer (on the shared DynamoDB Local), so that the flood slows no other test.
  work = await mkdtemp(join(tmpdir(), 'museum-login-flood-'));
  flooded = await startLocalApiProcess({ DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint, MUSEUM_DATA_DIR: join(work, 'data') }, join(work, 'api.log'));
}, LOCAL_API_START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  try {
    await flooded?.stop();
  } finally {
    closeTableClient();
    if (work) await rm(work, { recursive: true, force: true });
  }
});

interface Answer {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  ms: number;
}

async function login(authorization: string): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${flooded?.url}/special-events?startDate=9970-01-01&endDate=9970-01-01`, { headers: { Authorization: authorization } });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), contentType: response.headers.get('content-type'), ms: performance.now() - started };
}

/** The flood's three kinds, by client: distinct wrong passwords for a real user, unknown users, one wrong password repeated. */
function wrongCredentials(client: number): string {
  if (client < 10) return basicAuthorization(TEST_USERS.editor.username, `guess-${randomUUID()}`);
  if (client < 15) return basicAuthorization(`nobody-${randomUUID().slice(0, 12)}`, `guess-${randomUUID()}`);
  return basicAuthorization(TEST_USERS.viewer.username, 'the-same-wrong-password');
}

test(`during a flood of ${FLOOD_REQUESTS}+ wrong logins from ${FLOOD_CLIENTS} clients, at least 90 % of fresh valid logins succeed; nothing is 5xx but the documented 503`, async () => {
  const store = new UsersStore(tableClient(), testEnvironment().tableName);
  const fresh = await Promise.all(
    Array.from({ length: VALID_LOGINS }, async () => {
      const user = { username: `flood-${randomUUID().slice(0, 8)}`, password: `valid-${randomUUID()}` };
      await store.putUser({ ...user, role: 'viewer', passwordHash: await hashPassword(user.password) }, 'create');
      return user;
    }),
  );

  const flood: Answer[][] = Array.from({ length: FLOOD_CLIENTS }, () => []);
  let sent = 0;
  let validDone = false;
  // Clients that never wait, not even after a 503: they stop once the valid logins are all answered
  // (each within the authorizer's and the handler's timeouts) and they have sent at least FLOOD_REQUESTS.
  const attackers = Array.from({ length: FLOOD_CLIENTS }, async (_, client) => {
    while (sent < FLOOD_REQUESTS || !validDone) {
      sent++;
      flood[client]?.push(await login(wrongCredentials(client)));
    }
  });
  // Once the flood is under way, the valid users log in one after another, each never seen before
  // (bench/authorizer/flood.ts also sends them all at once, on an idle machine: a burst of logins
  // needs CPU a loaded machine may not have, flood or not).
  while (sent < 2 * FLOOD_CLIENTS) await new Promise((resolve) => setTimeout(resolve, 10));
  const valid: (Answer & { floodedDuring: number })[] = [];
  for (const user of fresh) {
    const sentBefore = sent;
    const answer = await login(basicAuthorization(user.username, user.password));
    valid.push({ ...answer, floodedDuring: sent - sentBefore });
  }
  validDone = true;
  await Promise.all(attackers);

  const floodAnswers = flood.flat();
  const count = (answers: Answer[], status: number) => answers.filter((answer) => answer.status === status).length;
  const validMs = valid.filter((answer) => answer.status === 200).map((answer) => Math.round(answer.ms)).sort((a, b) => a - b);
  recordFigures('login-flood', {
    floodRequests: floodAnswers.length,
    flood401: count(floodAnswers, 401),
    flood503: count(floodAnswers, 503),
    repeatedWrong401: count(flood.slice(15).flat(), 401),
    valid200: count(valid, 200),
    valid503: count(valid, 503),
    validMs,
  });

  expect(floodAnswers.length).toBeGreaterThanOrEqual(FLOOD_REQUESTS);
  // Every valid login was answered while the flood went on.
  for (const answer of valid) expect(answer.floodedDuring).toBeGreaterThan(0);
  // The flood: refused (401), or turned away before its credentials were checked (503 + Retry-After, problem+json).
  // Never a 200, never another 5xx.
  expect(floodAnswers.filter((answer) => answer.status !== 401 && answer.status !== 503)).toEqual([]);
  expect(count(floodAnswers, 401)).toBeGreaterThan(0);
  // A wrong password repeated is remembered as wrong (one verification, then none): its clients are
  // answered 401, at most its first verification turned away.
  const repeated = flood.slice(15).flat();
  expect(count(repeated, 401)).toBeGreaterThanOrEqual(0.9 * repeated.length);
  // The valid logins: 200, or at worst the same documented 503; never 401.
  expect(valid.filter((answer) => answer.status !== 200 && answer.status !== 503)).toEqual([]);
  expect(count(valid, 200)).toBeGreaterThanOrEqual(Math.ceil(0.9 * VALID_LOGINS));
  for (const answer of [...floodAnswers, ...valid].filter((a) => a.status === 503)) {
    expect(answer.retryAfter).toMatch(/^\d+$/);
    expect(answer.contentType).toBe('application/problem+json');
  }
  // And after the flood, a known user's cached login and a fresh one both work.
  expect((await login(basicAuthorization(TEST_USERS.viewer.username, TEST_USERS.viewer.password))).status).toBe(200);
}, 180_000);
