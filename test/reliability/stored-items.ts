// Looks at the events table directly (not through the API) to check what a write really left
// behind: one base item plus exactly one index item per month of its dates (with that month's
// dates and the current name), or nothing at all.
import { randomUUID } from 'node:crypto';
import { QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UsersStore } from '../../functions/auth/users-store.ts';
import { createDocumentClient } from '../../functions/store/dynamodb-client.ts';
import { datesByMonth } from '../../functions/store/event-items.ts';
import { keys } from '../../functions/store/table-definition.ts';
import { localClient } from '../../lib/local/dynamodb-local.ts';
import type { SpecialEventBody } from '../support/api-client.ts';
import { testCredentialHash, testEnvironment } from '../support/test-environment.ts';

let client: DynamoDBDocumentClient | undefined;

export function tableClient(): DynamoDBDocumentClient {
  client ??= createDocumentClient(localClient(testEnvironment().dynamodbEndpoint));
  return client;
}

export function closeTableClient(): void {
  client?.destroy();
  client = undefined;
}

/** Adds `count` viewers never seen before (`<prefix>-<random>`), hashed under the tests' credential key, as global-setup adds its users. */
export async function addViewers(prefix: string, count: number): Promise<{ username: string; password: string }[]> {
  const store = new UsersStore(tableClient(), testEnvironment().tableName);
  return Promise.all(
    Array.from({ length: count }, async () => {
      const user = { username: `${prefix}-${randomUUID().slice(0, 12)}`, password: `generated-${randomUUID()}` };
      await store.putUser({ ...user, role: 'viewer', passwordHash: await testCredentialHash(user.password) }, 'create');
      return user;
    }),
  );
}

export interface StoredItems {
  base: Record<string, unknown> | undefined;
  dateItems: Record<string, unknown>[];
}

/** Every item under the event's partition key (pk EVENT#<id>). */
export async function storedItems(eventId: string): Promise<StoredItems> {
  const { pk } = keys.event(eventId);
  const { Items = [] } = await tableClient().send(
    new QueryCommand({
      TableName: testEnvironment().tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    }),
  );
  return { base: Items.find((item) => item.sk === 'EVENT'), dateItems: Items.filter((item) => item.sk !== 'EVENT') };
}

/**
 * Describes how the stored items differ from `expected` (undefined: the event must be gone
 * without a trace); an empty list when they agree.
 */
export async function storageProblems(eventId: string, expected: SpecialEventBody | undefined): Promise<string[]> {
  const { base, dateItems } = await storedItems(eventId);
  if (!expected) {
    return [...(base ? ['the base item is still there'] : []), ...dateItems.map((item) => `orphan index item ${String(item.sk)}`)];
  }
  if (!base) return ['the base item is missing'];
  const problems: string[] = [];
  for (const field of ['name', 'location', 'eventDescription', 'price'] as const) {
    if (base[field] !== expected[field])
      problems.push(`base ${field} is ${JSON.stringify(base[field])}, expected ${JSON.stringify(expected[field])}`);
  }
  if (JSON.stringify(base.dates) !== JSON.stringify(expected.dates)) problems.push(`base dates are ${JSON.stringify(base.dates)}`);
  // One month item per month of the dates, with that month's dates.
  const months = datesByMonth(expected.dates);
  const wanted = new Map([...months].map(([month, dates]) => [keys.monthItem(eventId, month).sk, dates]));
  for (const item of dateItems) {
    const entry = keys.monthIndexEntry(item);
    const dates = wanted.get(String(item.sk));
    if (!dates) problems.push(`orphan index item ${String(item.sk)}`);
    else if (
      item.gsi1pk !== `MONTH#${entry.month}` ||
      // byMonthEnd: only with two or more dates in the month, keyed by the last one and the byMonth key.
      item.gsi2pk !== (dates.length > 1 ? item.gsi1pk : undefined) ||
      item.gsi2sk !== (dates.length > 1 ? `${dates[dates.length - 1]}\u0000${String(item.gsi1sk)}` : undefined) ||
      entry.name !== expected.name ||
      entry.eventId !== eventId ||
      entry.firstDate !== dates[0] ||
      JSON.stringify(entry.dates) !== JSON.stringify(dates) ||
      `MONTH#${entry.month}` !== item.sk
    ) {
      problems.push(`index item ${String(item.sk)} has stale index keys or dates`);
    }
  }
  for (const sk of wanted.keys()) {
    if (!dateItems.some((item) => item.sk === sk)) problems.push(`index item ${sk} is missing`);
  }
  return problems;
}

/** Base items whose name is `name` (a Scan: only for names no other test uses). */
export async function baseItemsNamed(name: string): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  let exclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await tableClient().send(
      new ScanCommand({
        TableName: testEnvironment().tableName,
        FilterExpression: '#name = :name AND sk = :sk',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':name': name, ':sk': 'EVENT' },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    found.push(...(page.Items ?? []));
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return found;
}
