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

/**
 * Who wrote an index item: the version of the event its write commits (or tried to commit), when,
 * and a random id of that write attempt. Readers see it in the index sort key (the index is
 * KEYS_ONLY) and use it to tell a committed entry from a leftover they may delete.
 */
export interface IndexStamp {
  version: number;
  writtenAt: number;
  writeId: string;
}

/** One entry of the `byDate` index, read back from its keys. */
export interface DateIndexEntry {
  pk: string;
  sk: string;
  gsi1sk: string;
  eventId: string;
  date: string;
  name: string;
  /** Undefined for an item written before stamps existed (treated as version 0). */
  stamp: IndexStamp | undefined;
}

export const keys = {
  event: (eventId: string) => ({ pk: `EVENT#${eventId}`, sk: 'EVENT' }),
  /**
   * One index item per (date, name): during a rename the old name's item (still committed) and the
   * new name's item (not yet committed) must coexist, so the name is part of the key.
   */
  eventDate: (eventId: string, date: string, name: string) => ({ pk: `EVENT#${eventId}`, sk: `DATE#${date}#${name}` }),
  /** Index keys of one event date: partitioned by month, sorted by date, then name, then id (then the stamp). */
  dateIndex: (date: string, name: string, eventId: string, stamp: IndexStamp) => ({
    gsi1pk: `MONTH#${date.slice(0, 7)}`,
    gsi1sk: [date, name, eventId, stamp.version, stamp.writtenAt, stamp.writeId].join(KEY_SEPARATOR),
  }),
  dateIndexPartition: (month: string) => `MONTH#${month}`,
  /** Sort-key bounds that cover every entry dated from `startDate` to `endDate` inclusive. */
  dateIndexRange: (startDate: string, endDate: string) => ({ from: startDate, to: `${endDate}\u0001` }),
  /** Reads an index entry back from its keys (as a KEYS_ONLY index returns them). */
  dateIndexEntry: (item: Record<string, unknown>): DateIndexEntry => {
    const [date = '', name = '', eventId = '', version, writtenAt, writeId] = String(item.gsi1sk).split(KEY_SEPARATOR);
    return {
      pk: String(item.pk),
      sk: String(item.sk),
      gsi1sk: String(item.gsi1sk),
      eventId,
      date,
      name,
      stamp: writeId === undefined ? undefined : { version: Number(version), writtenAt: Number(writtenAt), writeId },
    };
  },
  // Few users, read through the authorizer's caches: one partition lets the CLI list them with a Query.
  user: (username: string) => ({ pk: 'USERS', sk: `USER#${username}` }),
  usersPartition: 'USERS',
  usernameFromSk: (sk: string) => sk.slice('USER#'.length),
  eventIdFromPk: (pk: string) => pk.slice('EVENT#'.length),
  dateFromSk: (sk: string) => sk.slice('DATE#'.length, 'DATE#yyyy-mm-dd'.length),
};
