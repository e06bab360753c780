// Capacity for real traffic, against a fresh local API with the deployed limits (METHOD_THROTTLING,
// one token bucket per method; the authorizer's deployed memory and reserved concurrency):
// - a client writing as fast as it can, then 16 concurrent whole-year PATCHes of one event, never
//   meets a 429 or a 5xx (concurrent writes of one event may lose their race: 409);
// - a flood of wrong credentials at 100 requests/s on a method does not keep a known client (one
//   already let in) out: API Gateway caches its policy, and the method's bucket (500 requests/s)
//   is far from empty;
// (100 users never seen before sending their first request at once, under these deployed limits:
// test/e2e/lambda-environments.test.ts.)
// A 429 is never retried, so any throttling shows. Writes carry an Idempotency-Key and follow the
// client's documented retry of 503 and 504 (docs/API.md: on a loaded machine a commit can outlive
// its time limit); the figures count them. No timings are asserted; they go to the figures (and `npm run bench`
// measures throughput).
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html
import { randomUUID } from 'node:crypto';
import {
  api,
  apiRetrying,
  basicAuthorization,
  privateYear,
  sampleEvent,
  type ApiResponse,
  type SpecialEventBody,
} from '../support/api-client.ts';
import { DEPLOYED_THROTTLING, LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { TEST_USERS } from '../support/test-environment.ts';
import { recordFigures } from './figures.ts';
import { atRate } from '../../bench/support/open-loop.ts';
import { closeTableClient } from './stored-items.ts';

let local: OwnLocalApi | undefined;

beforeAll(async () => {
  // The deployed production limits, not the test harness's lifted ones.
  local = await startOwnLocalApi('capacity', DEPLOYED_THROTTLING);
}, LOCAL_API_START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  try {
    await local?.stop();
  } finally {
    closeTableClient();
  }
});

const count = (statuses: number[]) => statuses.reduce<Record<number, number>>((all, s) => ({ ...all, [s]: (all[s] ?? 0) + 1 }), {});

/** Every day of `year`: the longest list of dates an event may have but one (366 in a leap year). */
function wholeYear(year: number): string[] {
  const days: string[] = [];
  for (let day = new Date(Date.UTC(year, 0, 1)); day.getUTCFullYear() === year; day.setUTCDate(day.getUTCDate() + 1)) {
    days.push(day.toISOString().slice(0, 10));
  }
  return days;
}

test('100 creates one after another as fast as a client can, then 16 concurrent whole-year PATCHes of one event: no 429, and no 5xx once the documented retry has run (conflicts are 409)', async () => {
  const year = privateYear();
  const creates: ApiResponse<SpecialEventBody>[] = [];
  for (let i = 0; i < 100; i++) {
    creates.push(
      await apiRetrying<SpecialEventBody>(
        'POST',
        '/special-events',
        { baseUrl: local?.url, json: { ...sampleEvent(), dates: [`${year}-03-01`] } },
        { statuses: [503] },
      ),
    );
  }
  const event = creates[0]?.body;
  if (!event) throw new Error('No event was created');
  const patches = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      apiRetrying(
        'PATCH',
        `/special-events/${event.eventId}`,
        { baseUrl: local?.url, json: { dates: wholeYear(year), price: i } },
        { statuses: [503] },
      ),
    ),
  );
  recordFigures('capacity-writes', { creates: count(creates.map((r) => r.status)), patches: count(patches.map((r) => r.status)) });
  expect(creates.filter((response) => response.status !== 201).map((response) => response.text)).toEqual([]);
  expect(patches.filter((response) => ![200, 409].includes(response.status)).map((response) => response.text)).toEqual([]);
  expect(patches.filter((response) => response.status === 200).length).toBeGreaterThan(0);
}, 600_000);

test("during 1,000 requests with wrong credentials at 100/s, a known client's 100 requests at 10/s all answer 200", async () => {
  const year = privateYear();
  const list = `/special-events?startDate=${year}-01-01&endDate=${year}-01-01`;
  // A request that gets no answer at all (a reset connection) counts as status 0.
  const send = (authorization: string) =>
    api('GET', list, { baseUrl: local?.url, as: { header: authorization }, skipContract: true }).then(
      (response) => ({ status: response.status, retryAfter: response.headers.get('retry-after') }),
      (error: unknown) => ({ status: 0, retryAfter: `${String(error)} (${String((error as { cause?: unknown }).cause)})` }),
    );
  // Distinct wrong passwords of a real user, and users that do not exist: each one a new check.
  const wrong = (i: number) =>
    i % 2 === 0
      ? basicAuthorization(TEST_USERS.viewer.username, `wrong-${randomUUID()}`)
      : basicAuthorization(`nobody-${randomUUID().slice(0, 12)}`, `wrong-${randomUUID()}`);
  const known = basicAuthorization(TEST_USERS.viewer.username, TEST_USERS.viewer.password);
  // A known client is one the API already let in: its policy is in the gateway's cache, as on API Gateway.
  expect((await send(known)).status).toBe(200);
  const [flood, client] = await Promise.all([atRate(1000, 100, (i) => send(wrong(i))), atRate(100, 10, () => send(known))]);
  recordFigures('capacity-wrong-credentials', { flood: count(flood.map((a) => a.status)), client: count(client.map((a) => a.status)) });
  expect(client.filter((answer) => answer.status !== 200)).toEqual([]);
  // The flood is refused (401); at 100/s it is far under the method's limit (no 429). A 503 would
  // be the authorizer's documented answer when it cannot keep up, always with Retry-After.
  expect(flood.filter((answer) => ![401, 503].includes(answer.status))).toEqual([]);
  expect(flood.filter((answer) => answer.status === 503 && !/^\d+$/.test(answer.retryAfter ?? ''))).toEqual([]);
}, 600_000);
