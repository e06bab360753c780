// The DynamoDB tables, in one place: the local bootstrap creates them from this definition and
// the CDK stack declares them from it. Key design and the reasons for it: functions/store/README.md.
import { CHANGE_ITEM } from '../changes/change-event.ts';

export interface KeyAttribute {
  name: string;
  type: 'S';
}

/** What a global secondary index copies from the table: the keys only, or the keys and some attributes. */
type IndexProjection = { type: 'KEYS_ONLY' } | { type: 'INCLUDE'; attributes: readonly string[] };

export interface TableDefinition {
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  globalSecondaryIndexes: readonly { indexName: string; partitionKey: KeyAttribute; sortKey: KeyAttribute; projection: IndexProjection }[];
  timeToLiveAttribute?: string;
  /** The DynamoDB stream's view type, if the table has a stream. */
  stream?: 'NEW_IMAGE' | 'NEW_AND_OLD_IMAGES' | 'OLD_IMAGE' | 'KEYS_ONLY';
}

/**
 * Events, their per-month index items, their change items (the feed's outbox) and users: one
 * table, item types told apart by key prefix. Its stream carries each new image: the webhook
 * consumer reads the change items' INSERTs from it. Change items expire by TTL (`expiresAt`).
 */
export const eventsTable = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  globalSecondaryIndexes: [
    {
      // Named for its projection: a GSI's projection cannot be changed in place (README.md here: migration).
      indexName: 'byMonth',
      partitionKey: { name: 'gsi1pk', type: 'S' },
      sortKey: { name: 'gsi1sk', type: 'S' },
      // The keys carry the first date, name and id; `dates` (that month's dates) lets a list
      // place an event whose first date in the month is before the range's start.
      projection: { type: 'INCLUDE', attributes: ['dates'] },
    },
    {
      // Sparse: only month items with two dates or more in their month. Sorted by the last date in
      // the month, so a list starting on day S > 1 finds the events whose first date in the month is
      // before S and that still have a date on or after S, without reading the month from its 1st.
      indexName: 'byMonthEnd',
      partitionKey: { name: 'gsi2pk', type: 'S' },
      sortKey: { name: 'gsi2sk', type: 'S' },
      projection: { type: 'INCLUDE', attributes: ['dates'] },
    },
  ],
  timeToLiveAttribute: CHANGE_ITEM.expiresAtAttribute,
  stream: 'NEW_IMAGE',
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

/** One entry of the `byMonth` index, read back: the event's first date in the month (the sort key's first part), name, and that month's dates. */
export interface MonthIndexEntry {
  eventId: string;
  month: string;
  firstDate: string;
  name: string;
  dates: string[];
}

export const keys = {
  event: (eventId: string) => ({ pk: `EVENT#${eventId}`, sk: 'EVENT' }),
  /** One index item per event and month: put again (replaced) when that month's dates or the name change. */
  monthItem: (eventId: string, month: string) => ({ pk: `EVENT#${eventId}`, sk: `MONTH#${month}` }),
  /** Index keys of an event's dates in one month: partitioned by month, sorted by first date, then name, then id. */
  monthIndex: (firstDate: string, name: string, eventId: string) => ({
    gsi1pk: `MONTH#${firstDate.slice(0, 7)}`,
    gsi1sk: [firstDate, name, eventId].join(KEY_SEPARATOR),
  }),
  monthIndexPartition: (month: string) => `MONTH#${month}`,
  /**
   * Keys of the sparse `byMonthEnd` index for a month item with these `dates` (that month's,
   * sorted) and `byMonth` keys: none for a single date; else sorted by the last date in the
   * month, followed by the whole `byMonth` sort key, so an entry read from either index is the same.
   */
  monthEndIndex: (dates: readonly string[], monthIndex: { gsi1pk: string; gsi1sk: string }) =>
    dates.length < 2
      ? {}
      : { gsi2pk: monthIndex.gsi1pk, gsi2sk: `${dates[dates.length - 1] as string}${KEY_SEPARATOR}${monthIndex.gsi1sk}` },
  /** Reads an index entry back from its keys (of either index) and `dates`. */
  monthIndexEntry: (item: Record<string, unknown>): MonthIndexEntry => {
    /* eslint-disable @typescript-eslint/no-base-to-string -- a DynamoDB attribute: whatever it holds at runtime, read as a string */
    const sortKey =
      item.gsi1sk === undefined
        ? String(item.gsi2sk ?? '')
            .split(KEY_SEPARATOR)
            .slice(1)
            .join(KEY_SEPARATOR)
        : String(item.gsi1sk);
    /* eslint-enable @typescript-eslint/no-base-to-string */
    const [firstDate = '', name = '', eventId = ''] = sortKey.split(KEY_SEPARATOR);
    return { eventId, month: firstDate.slice(0, 7), firstDate, name, dates: [...((item.dates as string[] | undefined) ?? [])] };
  },
  /**
   * A user's own item (role and credential hash), the only item the authorizer reads: one partition
   * per user, so no partition's read limit caps logins (functions/store/README.md, "Users").
   */
  user: (username: string) => ({ pk: `USER#${username}`, sk: 'USER' }),
  /** The partition-key pattern of users' own items (the authorizer's IAM LeadingKeys). */
  userPartitions: 'USER#*',
  /** A user's entry in the directory (role and key id, no hash), written in the same transaction: what the CLI lists. */
  userDirectoryEntry: (username: string) => ({ pk: 'USERS', sk: `USER#${username}` }),
  usersDirectory: 'USERS',
  eventIdFromPk: (pk: string) => pk.slice('EVENT#'.length),
};
