// Logins under a flood of wrong credentials, against a local API with API Gateway's method
// throttling (per method, a token bucket) in front of the authorizer (docs/DEPLOY.md, "Logins
// under a flood of wrong passwords"), at a stage limit of 20 requests/s, burst 10 (the local
// counterpart of `-c throttleRateLimit=20 -c throttleBurstLimit=10`): the deployed 500 requests/s
// is more than the local API serves on this machine's two shared cores, so a flood could never
// empty that bucket here. What the configuration does, asserted: a flood far over a method's limit is answered 429 (THROTTLED,
// Retry-After) or 401, never 200 and never another 5xx than the documented 503 with Retry-After
// (the authorizer throttled or timed out: a check on this machine's two shared cores takes far
// longer than the deployed one the reservation is sized for);
// logins on the methods the flood does not saturate succeed meanwhile, with the client's
// documented retry; and once the flood stops (deployed, WAF's per-address rule blocks it), fresh
// logins on the flooded method succeed too. No timings are asserted; they go to the figures.
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basicAuthorization } from '../support/api-client.ts';
import { resendWaitMs } from '../../bench/support/resend-rule.ts';
import { LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { TEST_USERS } from '../support/test-environment.ts';
import { recordFigures } from './figures.ts';
import { addViewers, closeTableClient } from './stored-items.ts';

const FLOOD_CLIENTS = 20;
const FLOOD_REQUESTS = 300;
/** The stage's limit for every method: low enough for this machine to exceed it. */
const THROTTLE = { rateLimit: 20, burstLimit: 10 };
/** Requests sent at once: six times the method's burst, over it unless they arrive over 2.5 s apart. */
const VOLLEY = 6 * THROTTLE.burstLimit;
const VALID_LOGINS = 6;
/** The client's documented retry of a 429 or 503 (resend-rule.ts): a bounded number of attempts. */
const LOGIN_RESENT_STATUSES: ReadonlySet<number> = new Set([429, 503]);
const ATTEMPTS = 20;
/** The flooded method; the valid logins meanwhile use another route's method. */
const FLOODED = '/special-events?startDate=9970-01-01&endDate=9970-01-01';
const UNFLOODED = `/special-events/${randomUUID()}`;

let flooded: OwnLocalApi | undefined;

beforeAll(async () => {
  // Its own gateway and authorizer (on the shared DynamoDB Local), with the deployed throttling.
  flooded = await startOwnLocalApi('login-flood', {
    MUSEUM_THROTTLE_RATE_LIMIT: String(THROTTLE.rateLimit),
    MUSEUM_THROTTLE_BURST_LIMIT: String(THROTTLE.burstLimit),
  });
}, LOCAL_API_START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  try {
    await flooded?.stop();
  } finally {
    closeTableClient();
  }
});

interface Answer {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
}

async function request(path: string, authorization: string): Promise<Answer> {
  const response = await fetch(`${flooded?.url}${path}`, { headers: { Authorization: authorization } });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), contentType: response.headers.get('content-type') };
}

/** A login as a client does it: 429 and 503 are retried after Retry-After. Returns every answer. */
async function loginWithRetry(path: string, authorization: string): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const answer = await request(path, authorization);
    answers.push(answer);
    const headers = new Headers(answer.retryAfter === null ? {} : { 'Retry-After': answer.retryAfter });
    const wait = resendWaitMs('GET', { status: answer.status, headers }, LOGIN_RESENT_STATUSES);
    if (wait === undefined) break;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return answers;
}

/** The flood's three kinds, by client: distinct wrong passwords for a real user, unknown users, one wrong password repeated. */
function wrongCredentials(client: number): string {
  if (client < 10) return basicAuthorization(TEST_USERS.editor.username, `guess-${randomUUID()}`);
  if (client < 15) return basicAuthorization(`nobody-${randomUUID().slice(0, 12)}`, `guess-${randomUUID()}`);
  return basicAuthorization(TEST_USERS.viewer.username, 'the-same-wrong-password');
}

/** A login that got in: past the authorizer (the event does not exist: 404; the list: 200). */
const loggedIn = (answers: Answer[]) => [200, 404].includes(answers.at(-1)?.status ?? 0);

test(`a flood of ${FLOOD_REQUESTS}+ wrong logins on one method is throttled (429) before the authorizer; valid logins get in with the documented retry`, async () => {
  const fresh = () => addViewers('flood', VALID_LOGINS);
  const during = await fresh();
  const after = await fresh();

  const flood: Answer[] = [];
  // Clients that never honour Retry-After, sending in volleys of VOLLEY requests at once: a volley
  // is over the method's burst however slowly this machine answers (a closed loop of clients that
  // each wait for their answer slows down with the authorizer, and on a busy machine fell under the
  // limit). The flood is bounded in requests: what the method lets through is an authorizer
  // invocation each, which this machine's two shared cores serve far more slowly than the deployed
  // authorizer's reserved environments.
  const attackers = (async () => {
    while (flood.length < FLOOD_REQUESTS) {
      flood.push(...(await Promise.all(Array.from({ length: VOLLEY }, (_, i) => request(FLOODED, wrongCredentials(i % FLOOD_CLIENTS))))));
    }
  })();
  while (flood.length < VOLLEY) await new Promise((resolve) => setTimeout(resolve, 10));
  // Meanwhile, users never seen before log in on another method, all at once, each with the client's retry.
  const validDuring = await Promise.all(during.map((user) => loginWithRetry(UNFLOODED, basicAuthorization(user.username, user.password))));
  await attackers;
  // The flood is over (deployed: the WAF blocks its address): the flooded method serves fresh logins again.
  const validAfter = await Promise.all(after.map((user) => loginWithRetry(FLOODED, basicAuthorization(user.username, user.password))));

  const count = (answers: Answer[], status: number) => answers.filter((answer) => answer.status === status).length;
  const log = await readFile(flooded?.logFile ?? '', 'utf8');
  recordFigures('login-flood', {
    floodRequests: flood.length,
    flood401: count(flood, 401),
    flood429: count(flood, 429),
    flood503: count(flood, 503),
    authorizerFailed: (log.match(/Authorizer failed:/g) ?? []).length,
    validDuringAttempts: validDuring.map((answers) => answers.length),
    validAfterAttempts: validAfter.map((answers) => answers.length),
  });

  expect(flood.length).toBeGreaterThanOrEqual(FLOOD_REQUESTS);
  // The flood: throttled by the method's limit (429), refused (401), or at worst the documented 503;
  // never a 200, never another 5xx. Some of it reached the authorizer and was refused.
  expect(flood.filter((answer) => ![401, 429, 503].includes(answer.status))).toEqual([]);
  expect(count(flood, 429)).toBeGreaterThan(0);
  expect(count(flood, 401)).toBeGreaterThan(0);
  // Every valid login gets in, with the retry the client documents.
  expect(validDuring.filter((answers) => !loggedIn(answers))).toEqual([]);
  expect(validAfter.filter((answers) => !loggedIn(answers))).toEqual([]);
  for (const answer of [...flood, ...validDuring.flat(), ...validAfter.flat()].filter((a) => a.status === 429 || a.status === 503)) {
    expect(answer.retryAfter).toMatch(/^\d+$/);
    expect(answer.contentType).toBe('application/problem+json');
  }
}, 240_000);
