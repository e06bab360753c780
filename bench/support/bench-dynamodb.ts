// The data every HTTP-level part of the benchmark starts from, set up once here for `npm run bench`
// (bench/run.ts) and the kiosk measurement alone (bench/kiosk/run.ts): DynamoDB Local in memory,
// the bench tables, the bench editor, and a calendar of 330 events, 30 of them in this week's
// default list window.
import { todayIn } from '../../functions/events/calendar-dates.ts';
import { startDynamoDbLocal } from '../../lib/local/dynamodb-local.ts';
import { buildCalendar, defaultWindow, type Window } from '../list-scaling/dataset.ts';
import { startBenchCredentialKeys } from './bench-credential-keys.ts';
import { addBenchUser, createBenchTables, loadEvents } from './bench-tables.ts';
import type { BenchTables } from './function-environment.ts';

export const BENCH_TABLES: BenchTables = { events: 'bench-events', idempotency: 'bench-idempotency' };

export interface BenchDynamoDb {
  endpoint: string;
  tables: BenchTables;
  /** The default list window (today + 7 days) the calendar's 30 inside events fall in. */
  window: Window;
}

/** Runs `use` against a freshly loaded DynamoDB Local, which is stopped when `use` settles. */
export async function withBenchDynamoDb<T>(use: (bench: BenchDynamoDb) => Promise<T>): Promise<T> {
  const dynamodb = await startDynamoDbLocal();
  const stopKeys = await startBenchCredentialKeys(dynamodb.endpoint);
  try {
    await createBenchTables(dynamodb.endpoint, BENCH_TABLES.events, BENCH_TABLES.idempotency);
    await addBenchUser(dynamodb.endpoint, BENCH_TABLES.events);
    const window = defaultWindow(todayIn('UTC'));
    const calendar = buildCalendar(330, 30, window, 7);
    await loadEvents(dynamodb.endpoint, BENCH_TABLES.events, [...calendar.inside, ...calendar.outside]);
    return await use({ endpoint: dynamodb.endpoint, tables: BENCH_TABLES, window });
  } finally {
    await stopKeys();
    await dynamodb.stop();
  }
}
