// Lambda's execution model through a fresh local API: overlapping first logins run in several
// authorizer execution environments, each starting cold, which Powertools' logger reports as
// `cold_start: true` in the function's JSON logs (one line per new environment).
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html ("For each concurrent
// request, Lambda provisions a separate instance of your execution environment").
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { FUNCTION_SETTINGS } from '../../functions/routes.ts';
import { basicAuthorization } from '../support/api-client.ts';
import {
  LOCAL_API_START_TIMEOUT_MS,
  startLocalApiProcess,
  withTestCredentialKeys,
  type LocalApiProcess,
} from '../support/local-api-process.ts';
import { testCredentialHash, testEnvironment } from '../support/test-environment.ts';
import { closeTableClient, tableClient } from '../reliability/stored-items.ts';

const LOGINS = 8;
/** The client's documented retry of a 429 or 503: wait Retry-After, try again, a few times. */
const ATTEMPTS = 6;

let local: LocalApiProcess | undefined;
let work: string | undefined;
let logFile: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'museum-lambda-environments-'));
  logFile = join(work, 'api.log');
  // A fresh local API: no authorizer environment exists yet. JSON logs at INFO, as deployed.
  local = await startLocalApiProcess(
    {
      DYNAMODB_ENDPOINT: testEnvironment().dynamodbEndpoint,
      MUSEUM_DATA_DIR: await withTestCredentialKeys(join(work, 'data')),
      MUSEUM_LOG_FORMAT: 'json',
      POWERTOOLS_LOG_LEVEL: 'INFO',
    },
    logFile,
  );
}, LOCAL_API_START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  try {
    await local?.stop();
  } finally {
    closeTableClient();
    if (work) await rm(work, { recursive: true, force: true });
  }
});

async function login(authorization: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${local?.url}/special-events?startDate=9971-01-01&endDate=9971-01-01`, {
      headers: { Authorization: authorization },
    });
    await response.arrayBuffer();
    const retryAfter = response.headers.get('retry-after');
    if (![429, 503].includes(response.status) || attempt === ATTEMPTS) return response.status;
    expect(retryAfter).toMatch(/^\d+$/);
    await new Promise((resolve) => setTimeout(resolve, Number(retryAfter) * 1000));
  }
}

test(`${LOGINS} overlapping first logins of new users run in several authorizer environments, each logging cold_start: true`, async () => {
  const store = new UsersStore(tableClient(), testEnvironment().tableName);
  const users = await Promise.all(
    Array.from({ length: LOGINS }, async () => {
      const user = { username: `cold-${randomUUID().slice(0, 8)}`, password: `valid-${randomUUID()}` };
      await store.putUser({ ...user, role: 'viewer', passwordHash: await testCredentialHash(user.password) }, 'create');
      return user;
    }),
  );
  const statuses = await Promise.all(users.map((user) => login(basicAuthorization(user.username, user.password))));
  expect(statuses).toEqual(Array(LOGINS).fill(200));

  // Worker threads forward their stdout asynchronously: give the last lines a moment to arrive.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const authorizerLines = (await readFile(logFile, 'utf8'))
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { function_name?: string; cold_start?: boolean; message?: string })
    .filter((entry) => entry.function_name === 'authorizer');
  const coldStarts = authorizerLines.filter((entry) => entry.cold_start === true).length;
  expect(authorizerLines.filter((entry) => entry.message === 'Authenticated')).toHaveLength(LOGINS);
  // Several environments, each cold once; never more than the reserved concurrency allows.
  expect(coldStarts).toBeGreaterThanOrEqual(2);
  expect(coldStarts).toBeLessThanOrEqual(Math.min(LOGINS, FUNCTION_SETTINGS.authorizer.reservedConcurrency));
}, 240_000);
