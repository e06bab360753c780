// List scaling: tables of 1,000 / 10,000 / 50,000 events, 30 of them in the default window and
// the rest around it (dataset.ts). For the default page: the list handler's latency, measured
// round-robin over the tables so background load falls on all of them alike, and the read
// capacity the store consumes, next to the cost of reading that page's items alone.
// Runs in its own process (see bench/run.ts); settings come in BENCH_LIST, results go to fd 3.
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { todayIn } from '../../functions/events/calendar-dates.ts';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { EventsReader } from '../../functions/store/events-store.ts';
import { eventsTable, keys } from '../../functions/store/table-definition.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { ensureTable } from '../../lib/local/local-tables.ts';
import { lambdaContext, proxyEvent } from '../support/api-events.ts';
import { loadEvents } from '../support/bench-tables.ts';
import { round, summarise, type LatencySummary } from '../support/stats.ts';
import { buildCalendar, defaultWindow, describeCalendar } from './dataset.ts';

interface ListSettings {
  endpoint: string;
  listBundle: string;
  sizes: number[];
  insideWindow: number;
  rounds: number;
  callsPerRound: number;
  warmUp: number;
}

export interface ListScalingResult {
  events: number;
  table: string;
  dataset: ReturnType<typeof describeCalendar>;
  itemsLoaded: number;
  loadSeconds: number;
  latency: LatencySummary;
  pageSize: number;
  consumedReadCapacity: number;
  /** Strongly consistent GetItem of each event on the page, as the store reads them: the cost of the page's items alone. */
  pageItemsReadCapacity: number;
}

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const settings = JSON.parse(process.env.BENCH_LIST ?? '{}') as ListSettings;
const today = todayIn(process.env.MUSEUM_TIME_ZONE ?? 'UTC');
const window = defaultWindow(today);
const raw = localClient(settings.endpoint);
const client = createDocumentClient(raw);

const tables = settings.sizes.map((size, index) => {
  const calendar = buildCalendar(size, settings.insideWindow, window, 1000 + index);
  return { size, name: `bench-list-${size}`, calendar, handler: undefined as Handler | undefined, samples: [] as number[] };
});

const loaded = new Map<string, { items: number; seconds: number }>();
for (const table of tables) {
  process.stderr.write(`  list scaling: loading ${table.size.toLocaleString('en')} events\n`);
  const started = performance.now();
  // Without the stream: a list reads no stream, and DynamoDB Local makes every write to a table
  // with a stream pay for all the stream records it holds (docs/FIDELITY.md, "DynamoDB Local's
  // streams"), which would make loading 50,000 events take hours after the large-events part.
  await ensureTable(raw, table.name, { ...eventsTable, stream: undefined });
  const items = await loadEvents(settings.endpoint, table.name, [...table.calendar.inside, ...table.calendar.outside], 8);
  loaded.set(table.name, { items, seconds: round((performance.now() - started) / 1000, 1) });
}

// Every page of the window must hold exactly the 30 events put there: nothing more, nothing lost.
for (const table of tables) {
  const store = new EventsReader(client, table.name);
  const seen = new Set<string>();
  for (let page = 1; page <= Math.ceil(settings.insideWindow / LIMITS.defaultListLimit) + 1; page++) {
    const { events } = await store.listEvents({ ...window, page, limit: LIMITS.defaultListLimit });
    for (const event of events) seen.add(event.eventId);
  }
  const expected = new Set(table.calendar.inside.map((event) => event.eventId));
  if (seen.size !== expected.size || [...seen].some((id) => !expected.has(id))) {
    throw new Error(`${table.name}: the window lists ${seen.size} events, expected the ${expected.size} put there`);
  }
}

// One instance of the list bundle per table: a module is evaluated once per URL, and the store
// reads TABLE_NAME on its first use.
for (const table of tables) {
  process.env.TABLE_NAME = table.name;
  const { handler } = (await import(`${pathToFileURL(settings.listBundle).href}?table=${table.name}`)) as { handler: Handler };
  table.handler = handler;
  for (let i = 0; i < settings.warmUp; i++) await invoke(handler);
}

async function invoke(handler: Handler): Promise<number> {
  const event = proxyEvent('listSpecialEvents');
  const context: Context = lambdaContext('list-special-events');
  const started = performance.now();
  const response = await handler(event, context);
  const elapsed = performance.now() - started;
  if (response.statusCode !== 200 || (JSON.parse(response.body) as unknown[]).length !== LIMITS.defaultListLimit) {
    throw new Error(`The default page answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  }
  return elapsed;
}

process.stderr.write(`  list scaling: ${settings.rounds} rounds of ${settings.callsPerRound} calls per table\n`);
for (let roundIndex = 0; roundIndex < settings.rounds; roundIndex++) {
  for (const table of tables) {
    for (let i = 0; i < settings.callsPerRound; i++) table.samples.push(await invoke(table.handler as Handler));
  }
}
if (todayIn(process.env.MUSEUM_TIME_ZONE ?? 'UTC') !== today) throw new Error('The date changed during the measurement: run it again');

const results: ListScalingResult[] = [];
for (const table of tables) {
  const store = new EventsReader(client, table.name);
  const page = await store.listEvents({ ...window, page: 1, limit: LIMITS.defaultListLimit });
  let pageItemsReadCapacity = 0;
  for (const event of page.events) {
    const response = await client.send(
      new GetCommand({ TableName: table.name, Key: keys.event(event.eventId), ConsistentRead: true, ReturnConsumedCapacity: 'TOTAL' }),
    );
    pageItemsReadCapacity += response.ConsumedCapacity?.CapacityUnits ?? 0;
  }
  results.push({
    events: table.size,
    table: table.name,
    dataset: describeCalendar(table.calendar, window),
    itemsLoaded: loaded.get(table.name)?.items ?? 0,
    loadSeconds: loaded.get(table.name)?.seconds ?? 0,
    latency: summarise(table.samples),
    pageSize: page.events.length,
    consumedReadCapacity: page.consumedReadCapacity,
    pageItemsReadCapacity,
  });
}
raw.destroy();

writeSync(3, JSON.stringify({ window, results }));
process.exit(0);
