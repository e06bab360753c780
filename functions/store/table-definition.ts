// The DynamoDB tables, in one place: the local bootstrap creates them from this definition and
// the CDK stack declares them from it. Key design and the reasons for it: README "Data model".

export interface KeyAttribute {
  name: string;
  type: 'S';
}

/** What a global secondary index copies from the table: the keys only, or the keys and some attributes. */
export type IndexProjection = { type: 'KEYS_ONLY' } | { type: 'INCLUDE'; attributes: readonly string[] };

export interface TableDefinition {
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  globalSecondaryIndexes: readonly { indexName: string; partitionKey: KeyAttribute; sortKey: KeyAttribute; projection: IndexProjection }[];
  timeToLiveAttribute?: string;
}

/** Events, their per-month index items and users: one table, item types told apart by key prefix. */
export const eventsTable = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  globalSecondaryIndexes: [
    {
      // Named for its projection: a GSI's projection cannot be changed in place, so the index that
      // replaced the KEYS_ONLY `byDate` has a new name (README "Data model": migration).
      indexName: 'byMonth',
      partitionKey: { name: 'gsi1pk', type: 'S' },
      sortKey: { name: 'gsi1sk', type: 'S' },
      // The keys carry the first date, name, id and stamp; `dates` (that month's dates) lets a list
      // place an event whose first date in the month is before the range's start.
      projection: { type: 'INCLUDE', attributes: ['dates'] },
    },
    {
      // Sparse: only month items with at least two dates in their month carry its keys. Sorted by
      // the last date in the month, so a list starting on day S > 1 finds the events whose first
      // date in the month is before S and that still have a date on or after S, without reading
      // the month from its 1st.
      indexName: 'byMonthEnd',
      partitionKey: { name: 'gsi2pk', type: 'S' },
      sortKey: { name: 'gsi2sk', type: 'S' },
      projection: { type: 'INCLUDE', attributes: ['dates'] },
    },
  ],
} as const satisfies TableDefinition;

/**
 * Idempotency records of POST, PATCH and DELETE (Idempotency-Key), each written in the same
 * transaction as the write it answers; TTL removes them after LIMITS.idempotencyWindowHours.
 */
export const idempotencyTable = {
  partitionKey: { name: 'id', type: 'S' },
  globalSecondaryIndexes: [],
  timeToLiveAttribute: 'expiration',
} as const satisfies TableDefinition;

export const MONTH_INDEX = eventsTable.globalSecondaryIndexes[0].indexName;
export const MONTH_END_INDEX = eventsTable.globalSecondaryIndexes[1].indexName;

// Separates the parts of an index sort key; names cannot contain control characters
// (validated), so U+0000 sorts before any character of a name: "Art" < "Art Deco".
const KEY_SEPARATOR = '\u0000';

/**
 * Who wrote an index item: the version of the event its write commits (or tried to commit), when,
 * and a random id of that write attempt. Readers see it in the index sort key and use it to tell
 * an abandoned item from one a write in flight may still commit.
 */
export interface IndexStamp {
  version: number;
  writtenAt: number;
  writeId: string;
}

/** The tag of the month items one write attempt puts: unique per attempt, named by the base item's `monthTags`. */
export function stampTag(stamp: Pick<IndexStamp, 'version' | 'writeId'>): string {
  return `${stamp.version}.${stamp.writeId}`;
}

/** One entry of the `byMonth` index: an event's dates in one month, read back from the index. */
export interface MonthIndexEntry {
  pk: string;
  sk: string;
  gsi1sk: string;
  eventId: string;
  month: string;
  /** The event's first date in the month (the sort key's first part). */
  firstDate: string;
  name: string;
  /** That month's dates, sorted. */
  dates: string[];
  stamp: IndexStamp;
  tag: string;
}

export const keys = {
  event: (eventId: string) => ({ pk: `EVENT#${eventId}`, sk: 'EVENT' }),
  /**
   * One index item per event, month and write attempt (`tag`): an item is only ever put once and
   * deleted, never changed in place, so a late or abandoned put can never alter the item a
   * committed base item names (`monthTags`).
   */
  monthItem: (eventId: string, month: string, tag: string) => ({ pk: `EVENT#${eventId}`, sk: `MONTH#${month}#${tag}` }),
  /** Index keys of an event's dates in one month: partitioned by month, sorted by first date, then name, then id (then the stamp). */
  monthIndex: (firstDate: string, name: string, eventId: string, stamp: IndexStamp) => ({
    gsi1pk: `MONTH#${firstDate.slice(0, 7)}`,
    gsi1sk: [firstDate, name, eventId, stamp.version, stamp.writtenAt, stamp.writeId].join(KEY_SEPARATOR),
  }),
  monthIndexPartition: (month: string) => `MONTH#${month}`,
  /**
   * Keys of the sparse `byMonthEnd` index for a month item with these `dates` (that month's,
   * sorted) and `byMonth` keys: none for a single date; else sorted by the last date in the
   * month, followed by the whole `byMonth` sort key, so an entry read from either index is the same.
   */
  monthEndIndex: (dates: readonly string[], monthIndex: { gsi1pk: string; gsi1sk: string }) =>
    dates.length < 2 ? {} : { gsi2pk: monthIndex.gsi1pk, gsi2sk: `${dates[dates.length - 1] as string}${KEY_SEPARATOR}${monthIndex.gsi1sk}` },
  /** Reads an index entry back from its keys (of either index) and `dates`. */
  monthIndexEntry: (item: Record<string, unknown>): MonthIndexEntry => {
    if (item.gsi1sk === undefined && item.gsi2sk !== undefined) {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a DynamoDB attribute: whatever it holds at runtime, compared as a string
      const gsi2sk = String(item.gsi2sk);
      item = { ...item, gsi1sk: gsi2sk.slice(gsi2sk.indexOf(KEY_SEPARATOR) + 1) };
    }
    const [firstDate = '', name = '', eventId = '', version, writtenAt, writeId = ''] = String(item.gsi1sk).split(KEY_SEPARATOR);
    const stamp = { version: Number(version), writtenAt: Number(writtenAt), writeId };
    return {
      pk: String(item.pk),
      sk: String(item.sk),
      gsi1sk: String(item.gsi1sk),
      eventId,
      month: firstDate.slice(0, 7),
      firstDate,
      name,
      dates: [...((item.dates as string[] | undefined) ?? [])],
      stamp,
      tag: stampTag(stamp),
    };
  },
  // Few users, read through the authorizer's caches: one partition lets the CLI list them with a Query.
  user: (username: string) => ({ pk: 'USERS', sk: `USER#${username}` }),
  usersPartition: 'USERS',
  usernameFromSk: (sk: string) => sk.slice('USER#'.length),
  eventIdFromPk: (pk: string) => pk.slice('EVENT#'.length),
};
