// How an event is stored, as pure functions (no DynamoDB call here, so the unit loop tests them):
// the base item, the month items of the index, the one write condition, list order, and what a
// failed commit means. The protocol they serve: functions/store/README.md.
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { EVENT_FIELDS } from '../events/event-fields.ts';
import type { SpecialEvent } from '../events/event-schema.ts';
import { LIMITS } from '../events/limits.ts';
import { keys, type MonthIndexEntry } from './table-definition.ts';

export type Item = Record<string, unknown>;

/** `version` is incremented by every write; the HTTP layer exposes it as the ETag. */
export interface StoredEvent {
  event: SpecialEvent;
  version: number;
}

/** A base item as a write needs it. */
export interface BaseItem extends StoredEvent {
  createdAt?: string | undefined;
  /** When the last change was committed: the next change's time comes after it. */
  updatedAt?: string | undefined;
}

/** The attributes a list reads of a base item (its commit time for the calendar feed's DTSTAMP). */
export const BASE_ATTRIBUTES = ['eventId', ...EVENT_FIELDS, 'version', 'updatedAt'];

/** The highest version a write may store: versions stay exact in JavaScript, JSON and the ETag. */
export const MAX_VERSION = Number.MAX_SAFE_INTEGER;

/** Why `value` cannot be a stored version (a safe integer from 1 to MAX_VERSION), or undefined if it can. */
export function storedVersionProblem(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return undefined;
  return `the version must be a whole number from 1 to ${MAX_VERSION}, not ${JSON.stringify(value)}`;
}

export function toStoredEvent(item: Item): StoredEvent {
  // Each field as the Document client read it, the list copied so that no caller shares the item's array.
  const event: Item = { eventId: String(item.eventId) };
  for (const field of EVENT_FIELDS) event[field] = Array.isArray(item[field]) ? [...(item[field] as unknown[])] : item[field];
  return { event: event as SpecialEvent, version: Number(item.version) };
}

/** A base item, or undefined for none (or for the marker a create's fence leaves: it has no version). */
export function toBaseItem(item: Item | undefined): BaseItem | undefined {
  if (item?.version === undefined) return undefined;
  return {
    ...toStoredEvent(item),
    createdAt: typeof item.createdAt === 'string' ? item.createdAt : undefined,
    updatedAt: typeof item.updatedAt === 'string' ? item.updatedAt : undefined,
  };
}

/** The dates of `dates` grouped by month, each month's sorted. */
export function datesByMonth(dates: readonly string[]): Map<string, string[]> {
  const months = new Map<string, string[]>();
  for (const date of [...dates].sort()) {
    const month = date.slice(0, 7);
    months.set(month, [...(months.get(month) ?? []), date]);
  }
  return months;
}

/**
 * Why these dates cannot be one event (more distinct months than LIMITS.maxEventMonths), or
 * undefined. The bound keeps every write one transaction: the base item, the idempotency record,
 * the change item and a put and a delete per month (3 + 2 × 48 = 99) fit TransactWriteItems' 100 actions.
 */
export function monthLimitProblem(dates: readonly string[]): string | undefined {
  const months = datesByMonth(dates).size;
  if (months <= LIMITS.maxEventMonths) return undefined;
  return `must fall in at most ${LIMITS.maxEventMonths} distinct months (maxEventMonths), not ${months}: split the series into several events`;
}

/** The month items a write puts and deletes to take the index from `current` (undefined: a create) to `next` (undefined: a delete). */
export function planMonths(
  eventId: string,
  current: Pick<SpecialEvent, 'name' | 'dates'> | undefined,
  next: Pick<SpecialEvent, 'name' | 'dates'> | undefined,
): { puts: Item[]; deletes: { pk: string; sk: string }[] } {
  const before = current ? datesByMonth(current.dates) : new Map<string, string[]>();
  const after = next ? datesByMonth(next.dates) : new Map<string, string[]>();
  const puts: Item[] = [];
  for (const [month, dates] of after) {
    // An unchanged month keeps its item: a put would only cost a write.
    if (current?.name === next?.name && sameList(before.get(month), dates)) continue;
    const monthIndex = keys.monthIndex(dates[0] as string, next?.name ?? '', eventId);
    puts.push({ ...keys.monthItem(eventId, month), ...monthIndex, ...keys.monthEndIndex(dates, monthIndex), dates });
  }
  const deletes = [...before.keys()].filter((month) => !after.has(month)).map((month) => keys.monthItem(eventId, month));
  return { puts, deletes };
}

/**
 * The one condition of every write of a base item: a create only where no item is; any other
 * write only on the version it read, and never once a fence has excluded it (`writeId` in the set
 * `fencedWrites`). The fence uses it without `writeId`: it holds the version the write read. A set,
 * not one id: several writes that read the same version can each be fenced, and each fence must
 * keep excluding its write after the next one is added.
 */
export function versionCondition(
  readVersion: number | undefined,
  writeId?: string,
): { ConditionExpression: string; ExpressionAttributeValues?: Item } {
  if (readVersion === undefined) return { ConditionExpression: 'attribute_not_exists(pk)' };
  if (writeId === undefined)
    return { ConditionExpression: 'version = :readVersion', ExpressionAttributeValues: { ':readVersion': readVersion } };
  return {
    ConditionExpression: 'version = :readVersion AND NOT contains(fencedWrites, :writeId)',
    ExpressionAttributeValues: { ':readVersion': readVersion, ':writeId': writeId },
  };
}

/**
 * The fence's UpdateItem for the write `writeId`, which read `readVersion` (undefined: a create):
 * adds the id to `fencedWrites` while the version is still the one read, so the write's commit
 * (versionCondition with its id) can no longer apply.
 */
export function fenceUpdate(
  tableName: string,
  eventId: string,
  readVersion: number | undefined,
  writeId: string,
): { TableName: string; Key: Item; UpdateExpression: string; ConditionExpression: string; ExpressionAttributeValues: Item } {
  const { ConditionExpression, ExpressionAttributeValues } = versionCondition(readVersion);
  return {
    TableName: tableName,
    Key: keys.event(eventId),
    UpdateExpression: 'ADD fencedWrites :writeIds',
    ConditionExpression,
    ExpressionAttributeValues: { ...ExpressionAttributeValues, ':writeIds': new Set([writeId]) },
  };
}

/** Errors after which DynamoDB certainly did not apply the request. */
const DEFINITE_FAILURES = new Set([
  'ValidationException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'ResourceNotFoundException',
  'IdempotentParameterMismatchException',
  'ConditionalCheckFailedException',
  'TransactionConflictException',
  'TransactionCanceledException',
]);

/**
 * What a failed commit (TransactWriteItems of the base item, then the record if any, then month
 * items) means: the base item changed (`found` holds its key now), the idempotency key is taken,
 * another transaction held an item (a retry may win), nothing applied (throttled, invalid, never
 * sent), or it may have applied (fence, then look).
 */
export type CommitOutcome =
  { kind: 'base-changed'; found: BaseItem | undefined } | { kind: 'key-taken' | 'conflict' | 'not-applied' | 'unknown' };

/**
 * The SDK resends a transaction with the same ClientRequestToken, and DynamoDB answers a resend
 * for the first attempt, so a final definite failure means no attempt applied.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
 */
export function classifyCommitError(
  error: Error & { CancellationReasons?: { Code?: string; Item?: unknown }[] },
  neverSent: boolean,
  hasRecord: boolean,
): CommitOutcome {
  if (neverSent) return { kind: 'not-applied' };
  if (!DEFINITE_FAILURES.has(error.name)) return { kind: 'unknown' };
  if (error.name === 'TransactionConflictException') return { kind: 'conflict' };
  if (error.name !== 'TransactionCanceledException') return { kind: 'not-applied' };
  const [base, record] = error.CancellationReasons ?? [];
  // A taken key decides the answer (the key's first one) whatever else changed: retrying the race would not.
  if (hasRecord && record?.Code === 'ConditionalCheckFailed') return { kind: 'key-taken' };
  if (base?.Code === 'ConditionalCheckFailed') return { kind: 'base-changed', found: toBaseItem(unmarshallItem(base.Item)) };
  if ((error.CancellationReasons ?? []).some((reason) => reason.Code === 'TransactionConflict')) return { kind: 'conflict' };
  return { kind: 'not-applied' };
}

/** An item in DynamoDB's own format, as errors carry it (the Document client leaves errors alone). */
export function unmarshallItem(item: unknown): Item | undefined {
  return item ? unmarshall(item as Record<string, AttributeValue>) : undefined;
}

/**
 * Whether an index entry shows the committed event: same name and the same dates in its month.
 * The index is eventually consistent (a stale entry may linger, a new one not show yet): only
 * entries that match the strongly consistent base item count.
 */
export function isCurrentEntry(entry: MonthIndexEntry, committed: SpecialEvent | undefined): boolean {
  // eslint-disable-next-line @typescript-eslint/prefer-optional-chain -- an index entry is read from DynamoDB: an absent name must not match an absent event
  return committed !== undefined && committed.name === entry.name && sameList(datesByMonth(committed.dates).get(entry.month), entry.dates);
}

/** An entry's place in a list: first date in the range, name, id, in binary (UTF-8) order as DynamoDB sorts keys. */
export function listOrder(firstInRange: string, entry: Pick<MonthIndexEntry, 'name' | 'eventId'>): Buffer {
  return Buffer.from(`${firstInRange}\u0000${entry.name}\u0000${entry.eventId}`);
}

/**
 * Merges one page of a month read from startDate (already in list order) with the entries that
 * started before startDate (`running`, in list order, consumed as they are placed); with
 * `exhausted`, the month has no more pages and every running entry left goes last.
 */
export function mergeRunning(
  page: readonly MonthIndexEntry[],
  running: { entry: MonthIndexEntry; order: Buffer }[],
  exhausted: boolean,
): MonthIndexEntry[] {
  const merged: MonthIndexEntry[] = [];
  for (const entry of page) {
    const order = listOrder(entry.firstDate, entry);
    while (running.length > 0 && Buffer.compare((running[0] as { order: Buffer }).order, order) < 0)
      merged.push((running.shift() as { entry: MonthIndexEntry }).entry);
    merged.push(entry);
  }
  if (exhausted) merged.push(...running.splice(0).map(({ entry }) => entry));
  return merged;
}

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a?.length === b.length && a.every((value, i) => value === b[i]);
}
