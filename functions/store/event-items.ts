// How an event is stored: its base item (the only record of what is committed) and one index
// item per month it has dates in. README "Data model".
import { EVENT_FIELDS } from '../events/event-fields.ts';
import type { NewSpecialEvent, SpecialEvent } from '../events/event-schema.ts';
import { keys, stampTag, type IndexStamp } from './table-definition.ts';

export type Item = Record<string, unknown>;

export interface StoredEvent {
  event: SpecialEvent;
  /** Incremented by every write; the HTTP layer exposes it as the ETag. */
  version: number;
}

/** A base item as a write needs it: the event, and which month items it names. */
export interface BaseItem extends StoredEvent {
  /** month (yyyy-mm) → tag of the index item holding the event's dates in that month. */
  monthTags: Record<string, string>;
  /** Epoch ms until which a large write holds the event (see EventsStore), if one does. */
  leaseUntil?: number;
  leaseId?: string;
  lastWriteId?: string;
}

/** The attributes a list reads of a base item. */
export const BASE_ATTRIBUTES = ['eventId', ...EVENT_FIELDS, 'version', 'monthTags'];

export function toStoredEvent(item: Item): StoredEvent {
  // Each field as the Document client read it (a string, a number, a list), the list copied so
  // that no caller shares the item's array.
  const event: Item = { eventId: String(item.eventId) };
  for (const field of EVENT_FIELDS) event[field] = Array.isArray(item[field]) ? [...(item[field] as unknown[])] : item[field];
  return { event: event as SpecialEvent, version: Number(item.version) };
}

/**
 * `#f0 = :f0`, … for each field given a value, in the order of EVENT_FIELDS, with the attribute
 * names and values they use: the SET clause of every write of the event's fields.
 */
export function fieldAssignments(fields: Partial<NewSpecialEvent>): { assignments: string[]; names: Record<string, string>; values: Record<string, unknown> } {
  const given = EVENT_FIELDS.filter((field) => fields[field] !== undefined);
  return {
    assignments: given.map((_, i) => `#f${i} = :f${i}`),
    names: Object.fromEntries(given.map((field, i) => [`#f${i}`, field])),
    values: Object.fromEntries(given.map((field, i) => [`:f${i}`, fields[field]])),
  };
}

/** A base item, or undefined for none (or for the marker a create's fence leaves: it has no version). */
export function toBaseItem(item: Item | undefined): BaseItem | undefined {
  if (item?.version === undefined) return undefined;
  return {
    ...toStoredEvent(item),
    monthTags: { ...((item.monthTags as Record<string, string> | undefined) ?? {}) },
    ...(item.leaseUntil === undefined ? {} : { leaseUntil: Number(item.leaseUntil), leaseId: String(item.leaseId) }),
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a DynamoDB attribute: whatever it holds at runtime, written as a string
    ...(item.lastWriteId === undefined ? {} : { lastWriteId: String(item.lastWriteId) }),
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

/** The index changes of a write: the month items to put and delete, and the new base item's `monthTags`. */
export interface MonthPlan {
  monthTags: Record<string, string>;
  puts: Item[];
  deletes: { pk: string; sk: string }[];
}

/**
 * The month items that take `current` (undefined for a create; its `monthTags` name its items) to
 * `next` (undefined for a delete). A month whose dates and name are unchanged keeps its item.
 */
export function planMonths(
  eventId: string,
  current: Pick<BaseItem, 'event' | 'monthTags'> | undefined,
  next: Pick<SpecialEvent, 'name' | 'dates'> | undefined,
  stamp: IndexStamp,
): MonthPlan {
  const before = current ? datesByMonth(current.event.dates) : new Map<string, string[]>();
  const after = next ? datesByMonth(next.dates) : new Map<string, string[]>();
  const monthTags: Record<string, string> = {};
  const puts: Item[] = [];
  for (const [month, dates] of after) {
    const kept = current?.monthTags[month];
    if (kept !== undefined && current?.event.name === next?.name && sameList(before.get(month), dates)) {
      monthTags[month] = kept;
      continue;
    }
    const tag = stampTag(stamp);
    monthTags[month] = tag;
    const monthIndex = keys.monthIndex(dates[0] as string, next?.name ?? '', eventId, stamp);
    puts.push({ ...keys.monthItem(eventId, month, tag), ...monthIndex, ...keys.monthEndIndex(dates, monthIndex), dates, writeVersion: stamp.version });
  }
  const deletes = Object.entries(current?.monthTags ?? {})
    .filter(([month, tag]) => monthTags[month] !== tag)
    .map(([month, tag]) => keys.monthItem(eventId, month, tag));
  return { monthTags, puts, deletes };
}

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a?.length === b.length && a.every((value, i) => value === b[i]);
}
