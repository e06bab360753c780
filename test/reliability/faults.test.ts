// DynamoDB faults: a second local API process (the same bundles as `npm start`) talks to
// DynamoDB Local through a fault-injecting proxy (bench/support/fault-proxy.ts), so the real AWS
// SDK retries and times out exactly as in Lambda. Throttling, server errors, hangs and dropped
// connections must end as 503 problem+json with Retry-After before the Lambda timeout, never as
// a partial write; short faults must be retried away; a lost response must not write twice.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DYNAMODB_CLIENT_SETTINGS } from '../../functions/store/dynamodb-client.ts';
import { FENCE_TIMEOUT_MS } from '../../functions/store/event-commit.ts';
import { FUNCTION_SETTINGS } from '../../functions/deployment.ts';
import { MONTH_INDEX, keys } from '../../functions/store/table-definition.ts';
import { LOCAL_TABLE_NAMES } from '../../lib/local/local-tables.ts';
import { apiRetrying, basicAuthorization, type SpecialEventBody } from '../support/api-client.ts';
import { listedIn } from '../support/list-windows.ts';
import { assertMatchesContract } from '../support/contract.ts';
import { startFaultProxy, type FaultKind, type FaultProxy, type FaultRule } from '../../bench/support/fault-proxy.ts';
import { ungranted } from '../../bench/support/granted-access.ts';
import { LOCAL_API_START_TIMEOUT_MS, startOwnLocalApi, type OwnLocalApi } from '../support/local-api-process.ts';
import { TEST_USERS, testEnvironment } from '../support/test-environment.ts';
import { recordFigures } from './figures.ts';
import { documentedProblemKind, expectServiceUnavailable } from './problem-check.ts';
import { dayOfYear, RESERVED_YEARS } from './reserved-years.ts';
import { baseItemsNamed, closeTableClient, storageProblems, tableClient } from './stored-items.ts';

/** Three attempts of at most 2 s each plus the SDK's backoff, with room for a busy machine. */
const SDK_GIVE_UP_MS = DYNAMODB_CLIENT_SETTINGS.maxAttempts * DYNAMODB_CLIENT_SETTINGS.requestTimeoutMs + 2_500;
const EDITOR = basicAuthorization(TEST_USERS.editor.username, TEST_USERS.editor.password);
const YEAR = RESERVED_YEARS.faults;

let proxy: FaultProxy;
let faultyApi: OwnLocalApi;
let nextDay = 0;
const survived: { scenario: string; status: number; ms: number }[] = [];

interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
  ms: number;
}

/** A request to the fault-injected API, checked against the contract like every e2e response. */
async function call<T = unknown>(
  method: string,
  path: string,
  options: { json?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const started = performance.now();
  const response = await fetch(`${faultyApi.url}${path}`, {
    method,
    headers: { Authorization: EDITOR, ...(options.json === undefined ? {} : { 'Content-Type': 'application/json' }), ...options.headers },
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
  });
  const text = await response.text();
  const ms = Math.round(performance.now() - started);
  const answer = {
    status: response.status,
    headers: response.headers,
    text,
    body: (text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined) as T,
    ms,
  };
  assertMatchesContract(method, path, answer);
  // No bound on `ms`: a handler that outlived its Lambda timeout is the gateway's 502 problem, which
  // every status assertion here refuses, whereas the client's own wait grows with the machine's load.
  return answer;
}

/** A write whose outcome the service could not learn: 504 gateway-timeout, never a 503 (which says nothing was written). */
function expectOutcomeUnknown(response: Answer): void {
  expect({ status: response.status, kind: documentedProblemKind(response) }).toEqual({ status: 504, kind: 'gateway-timeout' });
}

function inject(...rules: FaultRule[]) {
  for (const rule of rules) proxy.inject(rule);
}

function newEventBody(name = `Fault ${randomUUID()}`) {
  return { name, location: 'Hall', eventDescription: 'Written through the fault proxy', dates: [dayOfYear(YEAR, nextDay++)], price: 10 };
}

async function createEvent(): Promise<SpecialEventBody> {
  const created = await call<SpecialEventBody>('POST', '/special-events', { json: newEventBody() });
  expect(created.status).toBe(201);
  return created.body;
}

/** Index entries dated `date`, whoever they belong to. */
async function indexEntriesOn(date: string): Promise<unknown[]> {
  const { Items = [] } = await tableClient().send(
    new QueryCommand({
      TableName: testEnvironment().tableName,
      IndexName: MONTH_INDEX,
      KeyConditionExpression: 'gsi1pk = :month',
      ExpressionAttributeValues: { ':month': keys.monthIndexPartition(date.slice(0, 7)) },
    }),
  );
  return Items.filter((item) => keys.monthIndexEntry(item).dates.includes(date));
}

/** The event as stored, read straight from the table: unchanged means same fields, version and index items. */
async function expectUnchanged(event: SpecialEventBody, version: number) {
  expect(await storageProblems(event.eventId, event)).toEqual([]);
  const read = await call<SpecialEventBody>('GET', `/special-events/${event.eventId}`);
  expect(read.body).toEqual(event);
  expect(read.headers.get('etag')).toBe(`"${version}"`);
}

beforeAll(async () => {
  proxy = await startFaultProxy(testEnvironment().dynamodbEndpoint);
  faultyApi = await startOwnLocalApi('faults', {
    DYNAMODB_ENDPOINT: proxy.endpoint,
    MUSEUM_ADMIN_PASSWORD: TEST_USERS.editor.password,
    // The most talkative settings, for the log-secrecy check at the end: the handlers must not
    // log the event (it carries the Authorization header) even when asked to.
    POWERTOOLS_LOG_LEVEL: 'DEBUG',
    POWERTOOLS_LOGGER_LOG_EVENT: 'true',
  });
  // Authorize once while DynamoDB is healthy: the gateway caches it, so the faults below reach
  // the handlers (the authorizer under faults has its own test). On a busy machine the cold
  // authorizer can outlive its timeout (503 with Retry-After): asked again, as a client does.
  expect((await apiRetrying('GET', `/special-events?startDate=${YEAR}-01-01`, { baseUrl: faultyApi.url })).status).toBe(200);
}, LOCAL_API_START_TIMEOUT_MS + 60_000);

afterEach(() => proxy.clear());

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  const stats = proxy?.stats();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- stats is undefined when proxy is
  recordFigures('faults', { injected: stats?.injected, requestsSeenByProxy: stats?.operations, scenarios: survived });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await faultyApi?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await proxy?.close();
  closeTableClient();
});

const PERSISTENT_FAULTS: FaultKind[] = [
  'throttling',
  'provisioned-throughput-exceeded',
  'internal-server-error',
  'service-unavailable',
  'transaction-throttled',
  'connection-reset',
];

describe('a persistent DynamoDB fault', () => {
  test.each(PERSISTENT_FAULTS)('%s on the write: PATCH is a 503 with Retry-After and the event is unchanged', async (fault) => {
    const event = await createEvent();
    inject({ fault, operation: 'TransactWriteItems' });
    const patched = await call('PATCH', `/special-events/${event.eventId}`, { json: { dates: [dayOfYear(YEAR, 300)], name: 'Renamed' } });
    expectServiceUnavailable(patched);
    proxy.clear();
    await expectUnchanged(event, 1);
    survived.push({ scenario: `PATCH, ${fault} on TransactWriteItems`, status: patched.status, ms: patched.ms });
  });

  test.each<FaultKind>(['internal-server-error', 'connection-reset'])(
    '%s on the commit of a price change and on its fence (UpdateItem): PATCH is a 504 (outcome unknown) and the event is unchanged',
    async (fault) => {
      const event = await createEvent();
      inject({ fault, operation: 'TransactWriteItems' }, { fault, operation: 'UpdateItem' });
      const patched = await call('PATCH', `/special-events/${event.eventId}`, { json: { price: 99 } });
      // The SDK retried the commit: an earlier attempt could still land, and the fence that would
      // rule it out fails the same way. So not a 503: unknown.
      expectOutcomeUnknown(patched);
      proxy.clear();
      await expectUnchanged(event, 1);
      survived.push({ scenario: `PATCH of the price, ${fault} on its commit and fence`, status: patched.status, ms: patched.ms });
    },
  );

  test('internal-server-error on the write: POST is a 503 and stores neither the event nor an index item', async () => {
    const body = newEventBody();
    inject({ fault: 'internal-server-error', operation: 'TransactWriteItems' });
    const created = await call('POST', '/special-events', { json: body });
    expectServiceUnavailable(created);
    proxy.clear();
    expect(await baseItemsNamed(body.name)).toEqual([]);
    expect(await indexEntriesOn(body.dates[0] as string)).toEqual([]);
    survived.push({ scenario: 'POST, internal-server-error on TransactWriteItems', status: created.status, ms: created.ms });
  });

  test('throttling on the write: DELETE is a 503 and the event is still whole', async () => {
    const event = await createEvent();
    inject({ fault: 'throttling', operation: 'TransactWriteItems' });
    const deleted = await call('DELETE', `/special-events/${event.eventId}`);
    expectServiceUnavailable(deleted);
    proxy.clear();
    await expectUnchanged(event, 1);
    survived.push({ scenario: 'DELETE, throttling on TransactWriteItems', status: deleted.status, ms: deleted.ms });
  });

  test.each<[string, string, FaultKind]>([
    ['GET one event', 'GetItem', 'throttling'],
    ['GET the list', 'Query', 'internal-server-error'],
    ['GET the list', 'BatchGetItem', 'provisioned-throughput-exceeded'],
  ])('%s with %s failing (%s) is a 503 with Retry-After', async (what, operation, fault) => {
    const event = await createEvent();
    inject({ fault, operation });
    const path =
      what === 'GET one event'
        ? `/special-events/${event.eventId}`
        : `/special-events?startDate=${event.dates[0]}&endDate=${event.dates[0]}`;
    const read = await call('GET', path);
    expectServiceUnavailable(read);
    survived.push({ scenario: `${what}, ${fault} on ${operation}`, status: read.status, ms: read.ms });
  });
});

describe('a hung DynamoDB call', () => {
  test.each<[string, string[], Record<string, unknown>]>([
    ['the commit (TransactWriteItems)', ['TransactWriteItems'], { price: 99, dates: [dayOfYear(YEAR, 301)] }],
    ['the commit and its fence (UpdateItem)', ['TransactWriteItems', 'UpdateItem'], { price: 99 }],
  ])(
    'on %s ends after the SDK timeouts and retries as a 503 or 504, well before the Lambda timeout, and writes nothing',
    async (_what, operations, changes) => {
      const event = await createEvent();
      for (const operation of operations) inject({ fault: 'hang', operation });
      const patched = await call('PATCH', `/special-events/${event.eventId}`, { json: changes });
      // A hung commit is fenced (an UpdateItem) and answered 503; when the fence hangs too, the outcome is unknown: 504.
      const fenceHangs = operations.includes('UpdateItem');
      if (fenceHangs) expectOutcomeUnknown(patched);
      else expectServiceUnavailable(patched);
      expect(patched.ms).toBeLessThan(SDK_GIVE_UP_MS + (fenceHangs ? FENCE_TIMEOUT_MS : 0));
      proxy.clear();
      await expectUnchanged(event, 1);
      survived.push({ scenario: `PATCH, ${operations.join(' and ')} hang`, status: patched.status, ms: patched.ms });
    },
  );

  test('calls that each stay within the SDK timeouts but would add up past the Lambda timeout end as a 503 before it, and the write never lands', async () => {
    const event = await createEvent();
    // Two hung reads (retried: ~4 s), then a write that hangs on every attempt (~6 s more).
    inject({ fault: 'hang', operation: 'GetItem', times: 2 }, { fault: 'hang', operation: 'TransactWriteItems' });
    // A change of dates: read first, then the transaction.
    const patched = await call('PATCH', `/special-events/${event.eventId}`, { json: { price: 99, dates: [dayOfYear(YEAR, 302)] } });
    // The commit gets the time left before the early timeout less the fence's; then the fence
    // (an UpdateItem, which works) proves it did not apply: a 503, before the early timeout.
    // The handler's own 503 problem: had the early timeout not answered, Lambda's would have (a 502).
    expectServiceUnavailable(patched);
    proxy.clear();
    // The aborted call is not retried later: the event stays as it was.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await expectUnchanged(event, 1);
    survived.push({
      scenario: 'PATCH, 2 hung GetItems then hung TransactWriteItems (early timeout)',
      status: patched.status,
      ms: patched.ms,
    });
  }, 30_000);

  test('reading the idempotency record of a used key also ends as a 503; the next retry gets the event', async () => {
    const body = newEventBody();
    const key = randomUUID();
    const first = await call<SpecialEventBody>('POST', '/special-events', { json: body, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(201);
    inject({ fault: 'hang', operation: 'GetItem', table: 'museum-idempotency' });
    const replay = await call('POST', '/special-events', { json: body, headers: { 'Idempotency-Key': key } });
    expectServiceUnavailable(replay);
    expect(replay.ms).toBeLessThan(SDK_GIVE_UP_MS);
    proxy.clear();
    const retried = await call<SpecialEventBody>('POST', '/special-events', { json: body, headers: { 'Idempotency-Key': key } });
    expect(retried.status).toBe(201);
    expect(retried.body).toEqual(first.body);
    expect(await baseItemsNamed(body.name)).toHaveLength(1);
    survived.push({ scenario: 'POST retry with Idempotency-Key, idempotency-record GetItem hangs', status: replay.status, ms: replay.ms });
  });
});

describe('a short DynamoDB fault', () => {
  test.each<[FaultKind, string, number]>([
    ['throttling', 'TransactWriteItems', 2],
    ['internal-server-error', 'GetItem', 2],
    ['connection-reset', 'TransactWriteItems', 1],
    ['hang', 'GetItem', 1],
  ])('%s on %s (%i time(s)) is retried by the SDK: the PATCH succeeds once', async (fault, operation, times) => {
    const event = await createEvent();
    inject({ fault, operation, times });
    // Every PATCH reads the event, then writes one transaction.
    const changes = { price: 42, dates: [dayOfYear(YEAR, nextDay++)] };
    const patched = await call<SpecialEventBody>('PATCH', `/special-events/${event.eventId}`, { json: changes });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('etag')).toBe('"2"');
    expect(await storageProblems(event.eventId, { ...event, ...changes })).toEqual([]);
    survived.push({ scenario: `PATCH, ${fault} on ${operation} x${times} (retried)`, status: patched.status, ms: patched.ms });
  });

  test('a response lost after the write is retried with the same ClientRequestToken: one event, not two', async () => {
    const body = newEventBody();
    inject({ fault: 'lost-response', operation: 'TransactWriteItems', times: 1 });
    const created = await call<SpecialEventBody>('POST', '/special-events', { json: body });
    expect(created.status).toBe(201);
    expect(await baseItemsNamed(body.name)).toHaveLength(1);
    expect(await storageProblems(created.body.eventId, created.body)).toEqual([]);

    inject({ fault: 'lost-response', operation: 'TransactWriteItems', times: 1 });
    const patched = await call<SpecialEventBody>('PATCH', `/special-events/${created.body.eventId}`, {
      json: { price: 11, dates: [dayOfYear(YEAR, nextDay++)] },
    });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('etag')).toBe('"2"');
    expect(await storageProblems(created.body.eventId, patched.body)).toEqual([]);
    survived.push({
      scenario: 'POST and PATCH, response lost after the write (retried)',
      status: patched.status,
      ms: created.ms + patched.ms,
    });
  });

  test('a price change whose response is lost is retried into one new version, and its If-Match still holds', async () => {
    const event = await createEvent();
    inject({ fault: 'lost-response', operation: 'TransactWriteItems', times: 1 });
    const patched = await call<SpecialEventBody>('PATCH', `/special-events/${event.eventId}`, {
      json: { price: 12 },
      headers: { 'If-Match': '"1"' },
    });
    // Not 412: the resent transaction carries the same ClientRequestToken, which DynamoDB answers as the first.
    expect(patched.status).toBe(200);
    expect(patched.headers.get('etag')).toBe('"2"');
    expect(patched.body).toEqual({ ...event, price: 12 });
    expect(await storageProblems(event.eventId, patched.body)).toEqual([]);
    expect((await call('GET', `/special-events/${event.eventId}`)).headers.get('etag')).toBe('"2"');
    survived.push({
      scenario: 'PATCH of the price with If-Match, response lost after the write (retried)',
      status: patched.status,
      ms: patched.ms,
    });
  });
});

describe('a write of an event at the month limit through the faulty API', () => {
  const FIRST_YEAR = RESERVED_YEARS.manyMonths + 20;
  /** One date in each of `count` months from January of FIRST_YEAR + `offset`. */
  const monthly = (count: number, offset = 0) =>
    Array.from({ length: count }, (_, i) => new Date(Date.UTC(FIRST_YEAR + offset, i, 1)).toISOString().slice(0, 10));
  const years = Array.from({ length: 8 }, (_, i) => ({ startDate: `${FIRST_YEAR + i}-01-01`, endDate: `${FIRST_YEAR + i}-12-31` }));

  test('a PATCH of 48 months whose commit keeps failing is a 503; readers see the old event and nothing is left behind', async () => {
    const created = await call<SpecialEventBody>('POST', '/special-events', {
      json: { ...newEventBody('Large fault'), dates: monthly(48) },
    });
    expect(created.status).toBe(201);
    const event = created.body;
    inject({ fault: 'internal-server-error', operation: 'TransactWriteItems' });
    const patched = await call('PATCH', `/special-events/${event.eventId}`, {
      json: { name: 'Large fault, renamed', dates: monthly(48, 4) },
    });
    expectServiceUnavailable(patched);
    proxy.clear();
    survived.push({ scenario: 'PATCH of 48 months, internal-server-error on its commit', status: patched.status, ms: patched.ms });
    const read = await call<SpecialEventBody>('GET', `/special-events/${event.eventId}`);
    expect(read.body).toEqual(event);
    expect(read.headers.get('etag')).toBe('"1"');
    expect(await storageProblems(event.eventId, event)).toEqual([]);
    for (const year of years.slice(0, 4))
      expect((await listedIn(call, year)).filter((listed) => listed.eventId === event.eventId)).toEqual([event]);
  });

  test('a DELETE of 48 months whose commit is throttled is a 503 and the event is still whole; the retry deletes everything', async () => {
    const created = await call<SpecialEventBody>('POST', '/special-events', {
      json: { ...newEventBody('Large delete'), dates: monthly(48, 4) },
    });
    expect(created.status).toBe(201);
    inject({ fault: 'throttling', operation: 'TransactWriteItems' });
    const refused = await call('DELETE', `/special-events/${created.body.eventId}`);
    expectServiceUnavailable(refused);
    proxy.clear();
    expect(await storageProblems(created.body.eventId, created.body)).toEqual([]);
    const deleted = await call('DELETE', `/special-events/${created.body.eventId}`);
    expect(deleted.status).toBe(204);
    survived.push({ scenario: 'DELETE of 48 months, throttled commit, then retried', status: refused.status, ms: refused.ms });
    expect(await storageProblems(created.body.eventId, undefined)).toEqual([]);
    for (const year of years) expect((await listedIn(call, year)).filter((listed) => listed.eventId === created.body.eventId)).toEqual([]);
  });
});

describe('idempotent creation under faults', () => {
  test('a POST that got a 503 can be retried with its Idempotency-Key: exactly one event', async () => {
    const body = newEventBody();
    const key = randomUUID();
    inject({ fault: 'throttling', operation: 'TransactWriteItems' });
    expectServiceUnavailable(await call('POST', '/special-events', { json: body, headers: { 'Idempotency-Key': key } }));
    proxy.clear();
    const retried = await call<SpecialEventBody>('POST', '/special-events', { json: body, headers: { 'Idempotency-Key': key } });
    const again = await call<SpecialEventBody>('POST', '/special-events', { json: body, headers: { 'Idempotency-Key': key } });
    expect(retried.status).toBe(201);
    expect(again.body).toEqual(retried.body);
    expect(await baseItemsNamed(body.name)).toHaveLength(1);
  });

  test('a retry overtaking a slow first request: both get the one event the key created', async () => {
    const body = newEventBody();
    const key = randomUUID();
    inject({ fault: 'delay', delayMs: 1_500, operation: 'TransactWriteItems', times: 1 });
    const first = call<SpecialEventBody>('POST', '/special-events', { json: body, headers: { 'Idempotency-Key': key } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const meanwhile = await call<SpecialEventBody>('POST', '/special-events', { json: body, headers: { 'Idempotency-Key': key } });
    expect(meanwhile.status).toBe(201);
    expect((await first).status).toBe(201);
    expect((await first).body).toEqual(meanwhile.body);
    expect(await baseItemsNamed(body.name)).toHaveLength(1);
    survived.push({
      scenario: 'POST with Idempotency-Key overtaken by its retry (first write delayed 1.5 s)',
      status: 201,
      ms: (await first).ms,
    });
  });
});

describe('a client that retries every 503 and 504 with its Idempotency-Key', () => {
  test('ends with exactly the state it intended: each PATCH applied once, then the DELETE', async () => {
    const event = await createEvent();
    // Each intended write meets one fault (then DynamoDB is fine again): a lost response after the
    // commit, a server error, a reset, throttling, a hang, a lost response on the fence's UpdateItem.
    const faults: FaultRule[] = [
      { fault: 'lost-response', operation: 'TransactWriteItems', times: 1 },
      { fault: 'internal-server-error', operation: 'TransactWriteItems', times: 3 },
      { fault: 'connection-reset', operation: 'TransactWriteItems', times: 1 },
      { fault: 'throttling', operation: 'TransactWriteItems', times: 3 },
      { fault: 'hang', operation: 'TransactWriteItems', times: 1 },
      { fault: 'lost-response', operation: 'TransactWriteItems', times: 3 },
    ];
    const intended = [
      { dates: [dayOfYear(YEAR, 340)], name: 'Retried 1' },
      { price: 21 },
      { dates: [dayOfYear(YEAR, 341), dayOfYear(YEAR, 342)] },
      { name: 'Retried 2', price: 22 },
      { eventDescription: 'Retried to the end' },
      { dates: [dayOfYear(YEAR, 343)] },
    ];
    let expected: SpecialEventBody = event;
    const statuses: number[][] = [];
    for (const [i, changes] of intended.entries()) {
      const key = randomUUID();
      inject(faults[i] as FaultRule);
      const seen: number[] = [];
      let answer: Answer<SpecialEventBody> | undefined;
      for (let attempt = 0; attempt < 6; attempt++) {
        answer = await call<SpecialEventBody>('PATCH', `/special-events/${event.eventId}`, {
          json: changes,
          headers: { 'Idempotency-Key': key },
        });
        seen.push(answer.status);
        if (answer.status !== 503 && answer.status !== 504) break;
        if (answer.status === 503) documentedProblemKind(answer);
        if (attempt === 2) proxy.clear(); // the outage ends
      }
      proxy.clear();
      statuses.push(seen);
      expected = { ...expected, ...changes };
      expected.dates = [...expected.dates].sort();
      expect({ i, status: answer?.status, body: answer?.body, etag: answer?.headers.get('etag') }).toEqual({
        i,
        status: 200,
        body: expected,
        etag: `"${i + 2}"`,
      });
    }
    // Exactly once each: the version counts the intended writes, no more.
    const read = await call<SpecialEventBody>('GET', `/special-events/${event.eventId}`);
    expect(read.body).toEqual(expected);
    expect(read.headers.get('etag')).toBe(`"${intended.length + 1}"`);
    expect(await storageProblems(event.eventId, expected)).toEqual([]);
    // The DELETE, with a lost response: retried with its key, 204 again, never 404.
    const key = randomUUID();
    inject({ fault: 'lost-response', operation: 'TransactWriteItems', times: 3 });
    const deletions: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      const deleted = await call('DELETE', `/special-events/${event.eventId}`, { headers: { 'Idempotency-Key': key } });
      deletions.push(deleted.status);
      if (deleted.status !== 503 && deleted.status !== 504) break;
    }
    proxy.clear();
    expect(deletions.at(-1)).toBe(204);
    expect((await call('GET', `/special-events/${event.eventId}`)).status).toBe(404);
    expect(await storageProblems(event.eventId, undefined)).toEqual([]);
    recordFigures('retrying client', { patches: statuses, delete: deletions });
  }, 120_000);

  test('the same key with another request is a 422; a replay after the event changed still gets the first answer', async () => {
    const event = await createEvent();
    const key = randomUUID();
    const first = await call<SpecialEventBody>('PATCH', `/special-events/${event.eventId}`, {
      json: { price: 30 },
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status).toBe(200);
    expect((await call('PATCH', `/special-events/${event.eventId}`, { json: { price: 31 } })).status).toBe(200);
    const replay = await call<SpecialEventBody>('PATCH', `/special-events/${event.eventId}`, {
      json: { price: 30 },
      headers: { 'Idempotency-Key': key },
    });
    expect({ status: replay.status, body: replay.body, etag: replay.headers.get('etag') }).toEqual({
      status: 200,
      body: first.body,
      etag: '"2"',
    });
    const reused = await call('PATCH', `/special-events/${event.eventId}`, { json: { price: 32 }, headers: { 'Idempotency-Key': key } });
    expect({ status: reused.status, kind: documentedProblemKind(reused) }).toEqual({ status: 422, kind: 'idempotency-key-reused' });
    expect((await call('GET', `/special-events/${event.eventId}`)).headers.get('etag')).toBe('"3"');
  });
});

describe('the authorizer during a DynamoDB outage', () => {
  test('refuses credentials it has not cached (fails closed) with a documented problem, before its timeout', async () => {
    // A lower-case scheme is the same valid credential under another cache key: not cached anywhere yet.
    const uncached = EDITOR.replace(/^Basic/, 'basic');
    inject({ fault: 'internal-server-error', operation: 'GetItem' });
    const started = performance.now();
    const response = await fetch(`${faultyApi.url}/special-events`, { headers: { Authorization: uncached } });
    const answer = { status: response.status, headers: response.headers, text: await response.text() };
    expect(performance.now() - started).toBeLessThan(FUNCTION_SETTINGS.authorizer.timeoutSeconds * 1000);
    expect([500, 503]).toContain(answer.status);
    documentedProblemKind(answer);
    proxy.clear();
    // Once DynamoDB is back the same credentials work.
    expect((await fetch(`${faultyApi.url}/special-events`, { headers: { Authorization: uncached } })).status).toBe(200);
  });
});

describe('the log of the fault-injected API (DEBUG, POWERTOOLS_LOGGER_LOG_EVENT=true)', () => {
  test('never contains the Authorization header or the password', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200)); // let the child's pipe flush
    const log = await readFile(faultyApi.logFile, 'utf8');
    expect(log.length).toBeGreaterThan(0);
    for (const secret of [EDITOR, EDITOR.slice('Basic '.length), TEST_USERS.editor.password]) expect(log).not.toContain(secret);
  });
});

describe("the functions' IAM grants", () => {
  test('allow every DynamoDB request the functions sent through the faults above (fences and retries included)', () => {
    const recorded = proxy.accesses();
    // The run reached the fences and the authorizer: the check saw the requests that matter.
    expect(recorded.map(({ functionName }) => functionName)).toEqual(
      expect.arrayContaining(['authorizer', 'create-special-event', 'update-special-event', 'delete-special-event']),
    );
    expect(ungranted(recorded, { events: testEnvironment().tableName, idempotency: LOCAL_TABLE_NAMES.idempotency })).toEqual([]);
  });
});
