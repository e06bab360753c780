// The DynamoDB tables, in one place: the local bootstrap creates them from this definition and
// the CDK stack declares them from it. Key design and the reasons for it: README "Data model".

export interface KeyAttribute {
  name: string;
  type: 'S';
}

export interface TableDefinition {
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  globalSecondaryIndexes: { indexName: string; partitionKey: KeyAttribute; sortKey: KeyAttribute; projection: 'KEYS_ONLY' }[];
  timeToLiveAttribute?: string;
}

/** Events, their per-date index items and users: one table, item types told apart by key prefix. */
export const eventsTable = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  globalSecondaryIndexes: [
    {
      indexName: 'byDate',
      partitionKey: { name: 'gsi1pk', type: 'S' },
      sortKey: { name: 'gsi1sk', type: 'S' },
      // The base-table keys (EVENT#<id>, DATE#<date>) carry all that listing needs from the index.
      projection: 'KEYS_ONLY',
    },
  ],
} as const satisfies TableDefinition;

/**
 * Idempotency records of POST /special-events (Idempotency-Key), each written in the same
 * transaction as the event it created; TTL removes them after LIMITS.idempotencyWindowHours.
 */
export const idempotencyTable = {
  partitionKey: { name: 'id', type: 'S' },
  globalSecondaryIndexes: [],
  timeToLiveAttribute: 'expiration',
} as const satisfies TableDefinition;

export const DATE_INDEX = eventsTable.globalSecondaryIndexes[0].indexName;

// Separates the parts of a date-index sort key; names cannot contain control characters
// (validated), so U+0000 sorts before any character of a name: "Art" < "Art Deco".
const KEY_SEPARATOR = '\u0000';

export const keys = {
  event: (eventId: string) => ({ pk: `EVENT#${eventId}`, sk: 'EVENT' }),
  eventDate: (eventId: string, date: string) => ({ pk: `EVENT#${eventId}`, sk: `DATE#${date}` }),
  /** Index keys of one event date: partitioned by month, sorted by date, then name, then id. */
  dateIndex: (date: string, name: string, eventId: string) => ({
    gsi1pk: `MONTH#${date.slice(0, 7)}`,
    gsi1sk: [date, name, eventId].join(KEY_SEPARATOR),
  }),
  dateIndexPartition: (month: string) => `MONTH#${month}`,
  /** Sort-key bounds that cover every entry dated from `startDate` to `endDate` inclusive. */
  dateIndexRange: (startDate: string, endDate: string) => ({ from: startDate, to: `${endDate}\u0001` }),
  // Few users, read through the authorizer's caches: one partition lets the CLI list them with a Query.
  user: (username: string) => ({ pk: 'USERS', sk: `USER#${username}` }),
  usersPartition: 'USERS',
  usernameFromSk: (sk: string) => sk.slice('USER#'.length),
  eventIdFromPk: (pk: string) => pk.slice('EVENT#'.length),
  dateFromSk: (sk: string) => sk.slice('DATE#'.length),
};
