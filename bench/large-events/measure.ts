// Large events: create and PATCH of an event with a date for every day of a leap year (366 dates
// in 12 months: 12 month items, one transaction), through the handler bundles in-process as a warm Lambda runs
// them, and the write capacity each consumes, counted on the same store code (from source)
// through a client that adds up what its writes cost.
// Runs in its own process (see bench/run.ts); settings come in BENCH_LARGE, results go to fd 3.
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { addDays } from '../../functions/events/calendar-dates.ts';
import type { SpecialEventChanges } from '../../functions/events/event-schema.ts';
import { EventsStore } from '../../functions/store/events-store.ts';
import { LIMITS } from '../../functions/events/limits.ts';
import { lambdaContext, proxyEvent } from '../support/api-events.ts';
import { eventBody, loadEvents, sampleEvent } from '../support/bench-tables.ts';
import { countingEventsStore } from '../support/write-capacity.ts';
import { median, summarise, type LatencySummary } from '../support/stats.ts';

interface LargeSettings {
  endpoint: string;
  tables: { events: string; idempotency: string };
  bundles: Record<string, string>;
  iterations: number;
  warmUp: number;
  capacitySamples: number;
}

export interface LargeEventResult {
  name: string;
  /** Index items the operation puts and deletes. */
  indexItemsWritten: number;
  latency: LatencySummary;
  /** Write capacity units of one call (median over capacitySamples calls). */
  writeCapacity: number;
  /** Of which the change item (the feed's outbox) costs, median; writeCapacity minus this is the write without the outbox. */
  changeWriteCapacity: number;
}

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const settings = JSON.parse(process.env.BENCH_LARGE ?? '{}') as LargeSettings;
const DATES = LIMITS.maxDates;
const yearOf = (first: string) => Array.from({ length: DATES }, (_, i) => addDays(first, i));
const [yearA, yearB] = [yearOf('2032-01-01'), yearOf('2036-01-01')];
const oneDateMore = [...yearA.slice(1), '2033-01-01'];

/** Each subject alternates between two states, so that every call really changes it. */
interface LargeOperation {
  name: string;
  handler: string;
  indexItemsWritten: number;
  expectedStatus: number;
  /** The handler's request for call `i` on `eventId`. */
  event(i: number, eventId: string): APIGatewayProxyEvent;
  /** The same change through the store, for call `i`. */
  viaStore(store: EventsStore, i: number, eventId: string): Promise<unknown>;
}

const createBody = () => ({ ...eventBody('Large bench', 2032), dates: yearA });
const patch = (changes: (i: number) => SpecialEventChanges) => ({
  event: (i: number, eventId: string) => proxyEvent('updateSpecialEvent', { eventId, body: changes(i) }),
  viaStore: (store: EventsStore, i: number, eventId: string) => store.updateEvent(eventId, changes(i)),
});
const operations: LargeOperation[] = [
  {
    name: `create (${DATES} dates)`,
    handler: 'create-special-event',
    // One month item per month: 12 for a leap year.
    indexItemsWritten: 12,
    expectedStatus: 201,
    event: () => proxyEvent('createSpecialEvent', { body: createBody() }),
    viaStore: (store) => store.createEvent(createBody()),
  },
  {
    name: `PATCH all ${DATES} dates to ${DATES} others`,
    handler: 'update-special-event',
    indexItemsWritten: 24,
    expectedStatus: 200,
    ...patch((i) => ({ dates: i % 2 === 0 ? yearB : yearA })),
  },
  {
    name: `PATCH one of ${DATES} dates`,
    handler: 'update-special-event',
    // January's item replaced, January of the next year's added.
    indexItemsWritten: 3,
    expectedStatus: 200,
    ...patch((i) => ({ dates: i % 2 === 0 ? oneDateMore : yearA })),
  },
  {
    name: `PATCH the name (${DATES} dates)`,
    handler: 'update-special-event',
    indexItemsWritten: 24,
    expectedStatus: 200,
    ...patch((i) => ({ name: i % 2 === 0 ? 'Large bench, renamed' : 'Large bench' })),
  },
];

/** A store whose client adds up the write capacity of every write it sends. */
function countingStore() {
  return countingEventsStore(settings.tables.events, settings.tables.idempotency);
}

const subjects = operations.map(() => sampleEvent(yearA, 'Large bench'));
await loadEvents(settings.endpoint, settings.tables.events, subjects, 2);
const counting = countingStore();
const results: LargeEventResult[] = [];
for (const [index, operation] of operations.entries()) {
  const eventId = (subjects[index] as { eventId: string }).eventId;
  const bundle = settings.bundles[operation.handler] as string;
  const { handler } = (await import(pathToFileURL(bundle).href)) as { handler: Handler };
  process.stderr.write(`  large events: ${operation.name}\n`);
  let call = 0;
  const samples: number[] = [];
  for (let i = 0; i < settings.warmUp + settings.iterations; i++) {
    const started = performance.now();
    const response = await handler(operation.event(call++, eventId), lambdaContext(operation.handler));
    const elapsed = performance.now() - started;
    if (response.statusCode !== operation.expectedStatus)
      throw new Error(`${operation.name} answered ${response.statusCode}: ${response.body}`);
    if (i >= settings.warmUp) samples.push(elapsed);
  }
  const capacities: number[] = [];
  const changeCapacities: number[] = [];
  for (let i = 0; i < settings.capacitySamples; i++) {
    const [before, changesBefore] = [counting.consumed(), counting.consumedByChanges()];
    await operation.viaStore(counting.store, call++, eventId);
    capacities.push(counting.consumed() - before);
    changeCapacities.push(counting.consumedByChanges() - changesBefore);
  }
  results.push({
    name: operation.name,
    indexItemsWritten: operation.indexItemsWritten,
    latency: summarise(samples),
    writeCapacity: median(capacities),
    changeWriteCapacity: median(changeCapacities),
  });
}

writeSync(3, JSON.stringify(results));
process.exit(0);
