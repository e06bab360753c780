// Large events: create and PATCH of an event with a date for every day of a leap year (366 dates,
// more than one transaction holds), through the handler bundles in-process as a warm Lambda runs
// them, and the write capacity each consumes, counted on the same store code (from source)
// through a client that adds up what its writes cost.
// Runs in its own process (see bench/run.ts); settings come in BENCH_LARGE, results go to fd 3.
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient, type AttributeValue, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { addDays } from '../../functions/shared/calendar-dates.ts';
import { createDocumentClient, dynamoDbClientConfig } from '../../functions/shared/dynamodb-client.ts';
import type { SpecialEventChanges } from '../../functions/shared/event-schema.ts';
import { EventsStore } from '../../functions/shared/events-store.ts';
import { LIMITS } from '../../functions/shared/limits.ts';
import { lambdaContext, proxyEvent } from '../support/api-events.ts';
import { eventBody, loadEvents, sampleEvent } from '../support/bench-tables.ts';
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
    indexItemsWritten: DATES,
    expectedStatus: 201,
    event: () => proxyEvent('createSpecialEvent', { body: createBody() }),
    viaStore: (store) => store.createEvent(createBody()),
  },
  {
    name: `PATCH all ${DATES} dates to ${DATES} others`,
    handler: 'update-special-event',
    indexItemsWritten: 2 * DATES,
    expectedStatus: 200,
    ...patch((i) => ({ dates: i % 2 === 0 ? yearB : yearA })),
  },
  {
    name: `PATCH one of ${DATES} dates`,
    handler: 'update-special-event',
    indexItemsWritten: 2,
    expectedStatus: 200,
    ...patch((i) => ({ dates: i % 2 === 0 ? oneDateMore : yearA })),
  },
  {
    name: `PATCH the name (${DATES} dates)`,
    handler: 'update-special-event',
    indexItemsWritten: 2 * DATES,
    expectedStatus: 200,
    ...patch((i) => ({ name: i % 2 === 0 ? 'Large bench, renamed' : 'Large bench' })),
  },
];

type Attributes = Record<string, AttributeValue>;

/** An item's size as DynamoDB bills it: attribute names plus values (numbers approximated). */
function itemBytes(item: Attributes | undefined): number {
  const valueBytes = (value: AttributeValue): number => {
    if (value.S !== undefined) return Buffer.byteLength(value.S);
    if (value.N !== undefined) return Math.ceil(value.N.length / 2) + 1;
    if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
    if (value.M !== undefined) return 3 + itemBytes(value.M);
    return 1;
  };
  return Object.entries(item ?? {}).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

/**
 * Write capacity of a TransactWriteItems by DynamoDB's rules: 2 units per KB of each item written
 * (deleted index items are under 1 KB; an updated base item is about its new values), plus one
 * unit per `byDate` entry written or removed. Computed, because DynamoDB Local reports a
 * transaction as if it wrote one item; it reports single writes correctly, index included.
 */
function transactionWriteCapacity(items: TransactWriteItem[]): number {
  const units = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
  return items.reduce((sum, item) => {
    if (item.Put) return sum + 2 * units(itemBytes(item.Put.Item)) + (item.Put.Item?.gsi1pk ? 1 : 0);
    if (item.Delete) return sum + 2 + (item.Delete.Key?.sk?.S?.startsWith('DATE#') ? 1 : 0);
    if (item.Update) return sum + 2 * units(itemBytes(item.Update.ExpressionAttributeValues) + 100);
    return sum;
  }, 0);
}

/** A store whose client adds up the write capacity of every write it sends. */
function countingStore(): { store: EventsStore; consumed: () => number } {
  let writeCapacity = 0;
  const client = new DynamoDBClient(dynamoDbClientConfig());
  const singleWrites = new Set(['PutItemCommand', 'DeleteItemCommand', 'UpdateItemCommand']);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand') {
        writeCapacity += transactionWriteCapacity((args.input as { TransactItems: TransactWriteItem[] }).TransactItems);
        return next(args);
      }
      if (!singleWrites.has(context.commandName ?? '')) return next(args);
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      writeCapacity += (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
      return result;
    },
    { step: 'initialize', name: 'countWriteCapacity' },
  );
  return { store: new EventsStore(createDocumentClient(client), settings.tables.events, settings.tables.idempotency), consumed: () => writeCapacity };
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
    if (response.statusCode !== operation.expectedStatus) throw new Error(`${operation.name} answered ${response.statusCode}: ${response.body}`);
    if (i >= settings.warmUp) samples.push(elapsed);
  }
  const capacities: number[] = [];
  for (let i = 0; i < settings.capacitySamples; i++) {
    const before = counting.consumed();
    await operation.viaStore(counting.store, call++, eventId);
    capacities.push(counting.consumed() - before);
  }
  results.push({ name: operation.name, indexItemsWritten: operation.indexItemsWritten, latency: summarise(samples), writeCapacity: median(capacities) });
}

writeSync(3, JSON.stringify(results));
process.exit(0);
