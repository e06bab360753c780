// Tables for the benchmark in its own DynamoDB Local, and fast loading with BatchWriteItem.
// Items are written in exactly the shape the events store writes them (base item plus one
// index item per month); the benchmark then reads them only through the store and the bundles.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import type { SpecialEvent } from '../../functions/events/event-schema.ts';
import { planMonths } from '../../functions/store/event-items.ts';
import { eventsTable, idempotencyTable, keys } from '../../functions/store/table-definition.ts';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import { ensureTable } from '../../lib/local/local-tables.ts';
import { BENCH_PRINCIPAL } from './api-events.ts';
import { benchCredentialHash } from './bench-credential-keys.ts';

export const BENCH_PASSWORD = 'bench-password-of-twenty-or-more';

export async function createBenchTables(endpoint: string, events: string, idempotency?: string): Promise<void> {
  const client = localClient(endpoint);
  try {
    await ensureTable(client, events, eventsTable);
    if (idempotency) await ensureTable(client, idempotency, idempotencyTable);
  } finally {
    client.destroy();
  }
}

/** The bench editor (the principal of every proxy event), hashed under the bench's credential key. */
export async function addBenchUser(endpoint: string, table: string): Promise<void> {
  const client = localClient(endpoint);
  try {
    await new UsersStore(createDocumentClient(client), table).putUser(
      { username: BENCH_PRINCIPAL, role: 'editor', passwordHash: await benchCredentialHash(BENCH_PASSWORD) },
      'create',
    );
  } finally {
    client.destroy();
  }
}

/** The base item and the per-month index items of one event, as EventsStore.createEvent writes them. */
export function eventItems(event: SpecialEvent): Record<string, unknown>[] {
  const now = new Date().toISOString();
  return [
    { ...keys.event(event.eventId), ...event, version: 1, lastWriteId: event.eventId, createdAt: now, updatedAt: now },
    ...planMonths(event.eventId, undefined, event).puts,
  ];
}

export function sampleEvent(dates: string[], name = `Bench event ${randomUUID().slice(0, 8)}`): SpecialEvent {
  return {
    eventId: randomUUID(),
    name,
    location: 'East Wing, Gallery 4',
    eventDescription: 'A guided evening tour of the new acquisitions, with the curators answering questions afterwards.',
    dates: [...new Set(dates)].sort(),
    price: 25.5,
  };
}

/** The body of a POST: a three-date event in `year`, named after the part of the benchmark that sends it. */
export function eventBody(label: string, year: number) {
  return {
    name: `${label} ${randomUUID().slice(0, 8)}`,
    location: 'Main Hall',
    eventDescription: 'An introduction to the collection for new members.',
    dates: [`${year}-03-01`, `${year}-03-08`, `${year}-03-15`],
    price: 12.5,
  };
}

/** Writes the events' items with BatchWriteItem, `concurrency` requests in flight, retrying unprocessed items. */
export async function loadEvents(endpoint: string, table: string, events: Iterable<SpecialEvent>, concurrency = 4): Promise<number> {
  const raw: DynamoDBClient = localClient(endpoint);
  const client = createDocumentClient(raw);
  const batches: Record<string, unknown>[][] = [];
  let current: Record<string, unknown>[] = [];
  let itemCount = 0;
  for (const event of events) {
    for (const item of eventItems(event)) {
      current.push(item);
      itemCount += 1;
      if (current.length === 25) {
        batches.push(current);
        current = [];
      }
    }
  }
  if (current.length > 0) batches.push(current);
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const batch = batches[next++] as Record<string, unknown>[];
      await writeBatch(client, table, batch);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    raw.destroy();
  }
  return itemCount;
}

async function writeBatch(client: DynamoDBDocumentClient, table: string, items: Record<string, unknown>[]): Promise<void> {
  let requests = items.map((Item) => ({ PutRequest: { Item } }));
  for (let attempt = 1; requests.length > 0; attempt++) {
    if (attempt > 10) throw new Error('BatchWriteItem kept leaving items unprocessed');
    if (attempt > 1) await sleep(20 * attempt);
    const response = await client.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
    requests = (response.UnprocessedItems?.[table] ?? []) as typeof requests;
  }
}
