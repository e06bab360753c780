// Lambda's execution model through a fresh local API: overlapping first logins run in several
// authorizer execution environments, each starting cold, which Powertools' logger reports as
// `cold_start: true` in the function's JSON logs (one line per new environment); and a burst of
// 100 first logins on a two-core machine, under the deployed method throttling, is answered 200
// throughout (no 429; a busy machine's 503 with Retry-After retried), because the local Lambda
// initialises at most one environment per core at a time and starts each Init's clock when that
// Init starts, as Lambda measures Init on the environment's own CPU.
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html ("For each concurrent
// request, Lambda provisions a separate instance of your execution environment").
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html ("Init phase")
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { FUNCTION_SETTINGS } from '../../functions/deployment.ts';
import type { FunctionSettings } from '../../lib/local/lambda-runtime.ts';
import { apiRetrying, basicAuthorization } from '../support/api-client.ts';
import { DEPLOYED_THROTTLING, LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { addViewers, closeTableClient } from '../reliability/stored-items.ts';

const LOGINS = 8;
/** The authorizer as deployed (its reserved concurrency may be unset). */
const authorizerSettings: FunctionSettings = FUNCTION_SETTINGS.authorizer;

let local: OwnLocalApi | undefined;

/** Adds `count` viewers never seen before and returns their Authorization headers. */
async function newUsers(prefix: string, count: number): Promise<string[]> {
  return (await addViewers(prefix, count)).map((user) => basicAuthorization(user.username, user.password));
}

/** The local API's resident memory in MB (Linux /proc). */
function residentMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : 0;
}

interface AuthorizerLine {
  cold_start?: boolean;
  message?: string;
}

/**
 * The authorizer's JSON log lines, once at least `authenticated` of them say "Authenticated":
 * worker threads forward their output asynchronously, so the last lines may arrive after the answers.
 */
async function authorizerLog(authenticated: number): Promise<AuthorizerLine[]> {
  const read = async () =>
    (await readFile(local?.logFile ?? '', 'utf8'))
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { function_name?: string } & AuthorizerLine)
      .filter((entry) => entry.function_name === 'authorizer');
  for (const deadline = Date.now() + 60_000; ; await new Promise((resolve) => setTimeout(resolve, 200))) {
    const lines = await read();
    if (lines.filter((entry) => entry.message === 'Authenticated').length >= authenticated || Date.now() > deadline) return lines;
  }
}

beforeAll(async () => {
  // A fresh local API: no authorizer environment exists yet. JSON logs at INFO and the method
  // throttling, as deployed.
  local = await startOwnLocalApi('lambda-environments', {
    ...DEPLOYED_THROTTLING,
    MUSEUM_LOG_FORMAT: 'json',
    POWERTOOLS_LOG_LEVEL: 'INFO',
  });
}, LOCAL_API_START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  try {
    await local?.stop();
  } finally {
    closeTableClient();
  }
});

/** A first login, retried as a client does (apiRetrying: 429 and 503 after their Retry-After). */
async function login(authorization: string): Promise<number> {
  const query = '/special-events?startDate=9971-01-01&endDate=9971-01-01';
  return (await apiRetrying('GET', query, { baseUrl: local?.url as string, as: { header: authorization } })).status;
}

test(`${LOGINS} overlapping first logins of new users run in several authorizer environments, each logging cold_start: true`, async () => {
  const users = await newUsers('cold', LOGINS);
  const statuses = await Promise.all(users.map((authorization) => login(authorization)));
  expect(statuses).toEqual(Array(LOGINS).fill(200));

  const authorizerLines = await authorizerLog(LOGINS);
  const coldStarts = authorizerLines.filter((entry) => entry.cold_start === true).length;
  expect(authorizerLines.filter((entry) => entry.message === 'Authenticated')).toHaveLength(LOGINS);
  // Several environments, each cold once; never more than the reserved concurrency allows.
  expect(coldStarts).toBeGreaterThanOrEqual(2);
  expect(coldStarts).toBeLessThanOrEqual(Math.min(LOGINS, authorizerSettings.reservedConcurrency ?? LOGINS));
}, 240_000);

const BURST = 100;

test(`${BURST} overlapping first requests of ${BURST} new users all get in (a busy machine's 503 carries Retry-After and is retried as a client does), and the local API's memory stays bounded`, async () => {
  // Lambda itself would throttle a burst over the authorizer's reserved concurrency (503 here).
  expect(authorizerSettings.reservedConcurrency ?? Infinity).toBeGreaterThanOrEqual(BURST);
  const users = await newUsers('burst', BURST);
  const pid = local?.process.pid as number;
  const before = residentMb(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, residentMb(pid))), 100);
  const started = Date.now();
  try {
    const first = await Promise.all(
      users.map(async (authorization) => {
        const response = await fetch(`${local?.url}/special-events?startDate=9971-01-01&endDate=9971-01-01`, {
          headers: { Authorization: authorization },
        });
        await response.arrayBuffer();
        return { authorization, status: response.status, retryAfter: response.headers.get('retry-after') };
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    // On an idle machine all are 200 at once; under the whole suite's load an authorizer call may
    // outlive its DynamoDB or Secrets Manager time limit: the documented 503 with Retry-After.
    for (const answer of first.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toMatch(/^\d+$/);
    }
    const retried = await Promise.all(first.filter((a) => a.status !== 200).map((a) => login(a.authorization)));
    expect(retried).toEqual(retried.map(() => 200));
    console.log(
      `burst of ${BURST}: ${BURST - retried.length} answered 200 at once, ${retried.length} after a retry; first answers in ${seconds.toFixed(1)} s`,
    );
  } finally {
    clearInterval(sampler);
  }
  // Bounded: far fewer environments than requests (each costs about 20 MB), so far less memory
  // than a hundred of them.
  const coldStarts = (await authorizerLog(LOGINS + BURST)).filter((entry) => entry.cold_start === true).length;
  console.log(
    `burst of ${BURST}: ${coldStarts} authorizer cold starts in all; resident ${Math.round(before)} -> peak ${Math.round(peak)} MB`,
  );
  expect(coldStarts).toBeLessThan(BURST / 2);
  expect(peak - before).toBeLessThan(BURST * 5);
}, 300_000);
