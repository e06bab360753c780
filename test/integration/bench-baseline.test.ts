// The benchmark's raw baseline (bench/baseline/raw-operations.ts) sends the DynamoDB requests the
// store sends: the warm overhead and the cold-start ratios compare each handler with it, so a
// request the store has and the baseline lacks (as the change item once was) would be counted as
// the handler's own code. Both write through a recording fault proxy (bench/support/fault-proxy.ts),
// each with a session token of its own, and what their requests need from IAM (action, table,
// partition kind: bench/support/granted-access.ts) must be the same.
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as raw from '../../bench/baseline/raw-operations.ts';
import type { SpecialEvent } from '../../functions/events/event-schema.ts';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { EventsStore } from '../../functions/store/events-store.ts';
import { EventsReader } from '../../functions/store/month-index-reader.ts';
import { eventsTable, idempotencyTable } from '../../functions/store/table-definition.ts';
import { localClient, localCredentials, LOCAL_REGION } from '../../lib/local/dynamodb-local.ts';
import { ensureTable } from '../../lib/local/local-tables.ts';
import { executionRoleSessionToken } from '../../lib/local/lambda-environment.ts';
import { startFaultProxy, type FaultProxy } from '../../bench/support/fault-proxy.ts';
import { testEnvironment } from '../support/test-environment.ts';

const TABLE = `bench-baseline-${randomUUID()}`;
const IDEMPOTENCY_TABLE = `bench-baseline-idempotency-${randomUUID()}`;
/** The variables the baseline's client reads (it builds its own, as a bundle does from the Lambda environment). */
const CLIENT_VARIABLES = ['AWS_ENDPOINT_URL_DYNAMODB', 'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'];

let proxy: FaultProxy;
let store: EventsStore;
let reader: EventsReader;
const saved = Object.fromEntries(CLIENT_VARIABLES.map((name) => [name, process.env[name]]));

beforeAll(async () => {
  const { dynamodbEndpoint } = testEnvironment();
  const setup = localClient(dynamodbEndpoint);
  await ensureTable(setup, TABLE, eventsTable);
  await ensureTable(setup, IDEMPOTENCY_TABLE, idempotencyTable);
  setup.destroy();
  proxy = await startFaultProxy(dynamodbEndpoint);
  const credentials = localCredentials(dynamodbEndpoint);
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_SESSION_TOKEN: executionRoleSessionToken('baseline'),
  });
  const storeClient = new DynamoDBClient({
    endpoint: proxy.endpoint,
    region: LOCAL_REGION,
    credentials: { ...credentials, sessionToken: executionRoleSessionToken('store') },
  });
  const documents = createDocumentClient(storeClient);
  store = new EventsStore(documents, TABLE, IDEMPOTENCY_TABLE);
  reader = new EventsReader(documents, TABLE);
});

afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) Reflect.deleteProperty(process.env, name);
    else process.env[name] = value;
  }
  await proxy.close();
});

const fields = () => ({
  name: `Baseline ${randomUUID().slice(0, 8)}`,
  location: 'Main Hall',
  eventDescription: 'A talk.',
  dates: ['2031-03-01', '2031-04-08'],
  price: 12.5,
});

/** What `run` sends through the proxy: its requests by operation. */
async function requestsOf(run: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = proxy.stats().operations;
  await run();
  const after = proxy.stats().operations;
  return Object.fromEntries(
    Object.entries(after)
      .map(([operation, count]) => [operation, count - (before[operation] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );
}

test('each operation of the store and of the baseline sends the same requests, needing the same accesses (the change item included)', async () => {
  const window = { startDate: '2031-03-01', endDate: '2031-03-08' };
  const storeEvent = await store.createEvent(fields());
  const rawEvent: SpecialEvent = { eventId: randomUUID(), ...fields() };
  await raw.createEvent(TABLE, rawEvent);
  const pairs: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
    ['create', () => store.createEvent(fields()), () => raw.createEvent(TABLE, { eventId: randomUUID(), ...fields() })],
    [
      'create (Idempotency-Key)',
      () => store.createEvent(fields(), { principal: 'bench', key: randomUUID(), request: {} }),
      () => raw.createEventIdempotently(TABLE, IDEMPOTENCY_TABLE, { eventId: randomUUID(), ...fields() }, randomUUID()),
    ],
    ['get', () => store.getEvent(storeEvent.event.eventId), () => raw.getEvent(TABLE, rawEvent.eventId)],
    ['list', () => reader.listEvents({ ...window, page: 1, limit: 10 }), () => raw.listPage(TABLE, window.startDate, window.endDate, 10)],
    [
      'update (price)',
      () => store.updateEvent(storeEvent.event.eventId, { price: 20 }),
      () => raw.updatePrice(TABLE, rawEvent.eventId, 20),
    ],
    [
      'update (dates)',
      () => store.updateEvent(storeEvent.event.eventId, { dates: ['2031-05-01'] }),
      () => raw.updateDates(TABLE, rawEvent.eventId, ['2031-05-01']),
    ],
    ['delete', () => store.deleteEvent(storeEvent.event.eventId), () => raw.deleteEvent(TABLE, rawEvent.eventId)],
  ];
  for (const [name, ofStore, ofBaseline] of pairs) {
    const sent = await requestsOf(ofStore);
    expect([name, await requestsOf(ofBaseline)]).toEqual([name, sent]);
  }

  const accessesOf = (caller: string) =>
    proxy
      .accesses()
      .filter(({ functionName }) => functionName === caller)
      .map(({ access }) => JSON.stringify(access))
      .sort();
  const storeAccesses = accessesOf('store');
  expect(storeAccesses.some((access) => access.includes('CHANGES#'))).toBe(true);
  expect(accessesOf('baseline')).toEqual(storeAccesses);
});
