// EventsReader: one page of the events with a date in a range, read from the `byMonth` index and
// confirmed by the base items. Protocol: functions/store/README.md.
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchGetCommand, QueryCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { monthsBetween } from '../events/calendar-dates.ts';
import type { SpecialEvent } from '../events/event-schema.ts';
import { BASE_ATTRIBUTES, isCurrentEntry, listOrder, mergeRunning, toBaseItem, type BaseItem, type Item } from './event-items.ts';
import { StoreBusyError } from './store-errors.ts';
import { keys, MONTH_END_INDEX, MONTH_INDEX, type MonthIndexEntry } from './table-definition.ts';
import { TableStore } from './table-store.ts';

export interface ListEventsQuery {
  startDate: string;
  endDate: string;
  page: number;
  limit: number;
}

/**
 * `hasMore`: an event follows this page (read one past it); `consumedReadCapacity`: RCUs of the
 * page's queries and item reads; `stored`: the page's events with their versions and commit times
 * (the calendar feed's SEQUENCE and DTSTAMP).
 */
export interface ListEventsResult {
  events: SpecialEvent[];
  stored: BaseItem[];
  hasMore: boolean;
  consumedReadCapacity: number;
}

/** The list's side of the store, apart from EventsStore: the list's bundle leaves the writes out. */
export class EventsReader extends TableStore {
  /**
   * One page of the events with at least one date in [startDate, endDate], ordered by their first
   * date in the range, then name, then id. The indexes are eventually consistent: an entry counts
   * only if its event's base item, read strongly consistently, has the same name and the same dates
   * in that month (isCurrentEntry), so a deleted event never shows and a changed one shows once, at
   * its current place, once the index has caught up. Skipped pages are validated the same way.
   */
  async listEvents(query: ListEventsQuery): Promise<ListEventsResult> {
    const entries = new MonthIndexReader(this, query.startDate, query.endDate);
    const baseItems = new Map<string, BaseItem | undefined>();
    const listed = new Set<string>();
    const events: BaseItem[] = [];
    let toSkip = (query.page - 1) * query.limit;
    let itemReadCapacity = 0;
    // One event past the page tells whether a next page exists (the `next` link): one more index
    // entry and, in the same BatchGetItem, one more base item.
    const wantedEvents = query.limit + 1;
    while (events.length < wantedEvents) {
      const entry = await entries.next();
      if (!entry) break;
      if (!baseItems.has(entry.eventId)) {
        // Read this event and the next ones the page may need in one batch.
        const wanted = Math.min(100, toSkip + wantedEvents - events.length);
        const upcoming = await entries.upcomingEventIds(wanted - 1, (id) => id !== entry.eventId && !baseItems.has(id) && !listed.has(id));
        const { items, consumedReadCapacity } = await batchGetEvents(this, [entry.eventId, ...upcoming]);
        itemReadCapacity += consumedReadCapacity;
        for (const eventId of [entry.eventId, ...upcoming]) baseItems.set(eventId, toBaseItem(items.get(eventId)));
      }
      const committed = baseItems.get(entry.eventId);
      if (committed && isCurrentEntry(entry, committed.event) && !listed.has(entry.eventId)) {
        listed.add(entry.eventId);
        if (toSkip > 0) toSkip -= 1;
        else events.push(committed);
      }
    }
    const stored = events.slice(0, query.limit);
    return {
      events: stored.map((item) => item.event),
      stored,
      hasMore: events.length > query.limit,
      consumedReadCapacity: entries.consumedReadCapacity + itemReadCapacity,
    };
  }
}

async function batchGetEvents(
  listing: EventsReader,
  eventIds: string[],
): Promise<{ items: Map<string, Item>; consumedReadCapacity: number }> {
  const items = new Map<string, Item>();
  let consumedReadCapacity = 0;
  let keysToRead: Item[] | undefined = eventIds.map((eventId) => keys.event(eventId));
  for (let attempt = 1; keysToRead && keysToRead.length > 0; attempt++) {
    if (attempt > 5) throw new StoreBusyError('DynamoDB left part of a batch read unprocessed');
    if (attempt > 1) await sleep(2 ** attempt * 10 * Math.random(), undefined, { signal: listing.signal });
    const response: BatchGetCommandOutput = await listing.client.send(
      new BatchGetCommand({
        RequestItems: {
          [listing.tableName]: {
            Keys: keysToRead,
            ConsistentRead: true,
            ProjectionExpression: BASE_ATTRIBUTES.map((_, i) => `#a${i}`).join(', '),
            ExpressionAttributeNames: Object.fromEntries(BASE_ATTRIBUTES.map((name, i) => [`#a${i}`, name])),
          },
        },
        ReturnConsumedCapacity: 'TOTAL',
      }),
      { abortSignal: listing.signal },
    );
    for (const item of response.Responses?.[listing.tableName] ?? []) items.set(String(item.eventId), item);
    consumedReadCapacity += sumCapacity(response.ConsumedCapacity);
    keysToRead = response.UnprocessedKeys?.[listing.tableName]?.Keys;
  }
  return { items, consumedReadCapacity };
}

/**
 * Walks the `byMonth` index month by month over a date range and hands out its entries in list
 * order: by first date in the range, then name, then id. From startDate on, an entry's first date
 * in the range is its first date, the index's own order. The first month of a range that starts
 * after the 1st also has the events whose first date in the month is before startDate and that
 * still have a date on or after it: read from the sparse `byMonthEnd` index (last date in the
 * month ≥ startDate), placed by their first date in the range and merged into that order.
 */
class MonthIndexReader {
  consumedReadCapacity = 0;
  private readonly listing: EventsReader;
  private readonly startDate: string;
  private readonly endDate: string;
  private readonly months: string[];
  private monthIndex = 0;
  private exclusiveStartKey: Record<string, unknown> | undefined;
  private buffered: MonthIndexEntry[] = [];
  /** The first month's entries that started before startDate, in list order, not yet merged; undefined until read. */
  private running: { entry: MonthIndexEntry; order: Buffer }[] | undefined;

  constructor(listing: EventsReader, startDate: string, endDate: string) {
    this.listing = listing;
    this.startDate = startDate;
    this.endDate = endDate;
    this.months = monthsBetween(startDate, endDate);
  }

  async next(): Promise<MonthIndexEntry | undefined> {
    while (this.buffered.length === 0 && this.monthIndex < this.months.length) await this.readMore(32);
    return this.buffered.shift();
  }

  /** Up to `count` distinct event ids of the entries after the current one that pass `wanted`, without consuming them. */
  async upcomingEventIds(count: number, wanted: (eventId: string) => boolean): Promise<string[]> {
    const found = new Set<string>();
    let scanned = 0;
    while (found.size < count) {
      if (scanned === this.buffered.length) {
        if (this.monthIndex >= this.months.length) break;
        await this.readMore(2 * (count - found.size));
        continue;
      }
      const eventId = (this.buffered[scanned++] as MonthIndexEntry).eventId;
      if (wanted(eventId)) found.add(eventId);
    }
    return [...found];
  }

  private async readMore(wanted: number): Promise<void> {
    const month = this.months[this.monthIndex] as string;
    const startsMidMonth = this.monthIndex === 0 && !this.startDate.endsWith('-01');
    if (startsMidMonth && !this.running) this.running = await this.runningIntoRange(month);
    // An entry whose first date is after endDate has no date in the range.
    const values = { ':month': keys.monthIndexPartition(month), ':from': this.startDate, ':to': `${this.endDate}\u0001` };
    const page = await this.query(
      MONTH_INDEX,
      'gsi1pk = :month AND gsi1sk BETWEEN :from AND :to',
      values,
      this.exclusiveStartKey,
      Math.min(1000, Math.max(32, wanted)),
    );
    // Only a missing LastEvaluatedKey means the month is exhausted (pages also stop at 1 MB).
    this.exclusiveStartKey = page.lastEvaluatedKey;
    if (!this.exclusiveStartKey) this.monthIndex += 1;
    if (!startsMidMonth) {
      this.buffered.push(...page.entries);
      return;
    }
    // A running entry goes before the first entry of the page it precedes; the ones after the
    // page's last entry wait for the next page (all of them go once the month is exhausted).
    this.buffered.push(...mergeRunning(page.entries, this.running ?? [], !this.exclusiveStartKey));
  }

  /**
   * The entries of the first month whose first date is before startDate and that have a date in
   * the range, in list order: from `byMonthEnd`, where only entries with two or more dates in the
   * month are (a single date before startDate is never in the range).
   */
  private async runningIntoRange(month: string): Promise<{ entry: MonthIndexEntry; order: Buffer }[]> {
    const running: { entry: MonthIndexEntry; order: Buffer }[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await this.query(
        MONTH_END_INDEX,
        'gsi2pk = :month AND gsi2sk >= :from',
        { ':month': keys.monthIndexPartition(month), ':from': this.startDate },
        startKey,
        1000,
      );
      for (const entry of page.entries) {
        if (entry.firstDate >= this.startDate) continue; // `byMonth` read from startDate has it
        const first = entry.dates.find((date) => date >= this.startDate && date <= this.endDate);
        if (first) running.push({ entry, order: listOrder(first, entry) });
      }
      startKey = page.lastEvaluatedKey;
    } while (startKey);
    return running.sort((a, b) => Buffer.compare(a.order, b.order));
  }

  /** One page of an index query (both indexes project the keys and `dates`). */
  private async query(indexName: string, keyCondition: string, values: Item, startKey: Item | undefined, limit: number) {
    const sortKey = indexName === MONTH_INDEX ? 'gsi1sk' : 'gsi2sk';
    const response = await this.listing.client.send(
      new QueryCommand({
        TableName: this.listing.tableName,
        IndexName: indexName,
        KeyConditionExpression: keyCondition,
        ExpressionAttributeValues: values,
        ProjectionExpression: `pk, sk, ${sortKey}, dates`,
        Limit: limit,
        ExclusiveStartKey: startKey,
        ReturnConsumedCapacity: 'TOTAL',
      }),
      { abortSignal: this.listing.signal },
    );
    this.consumedReadCapacity += sumCapacity(response.ConsumedCapacity);
    return { entries: (response.Items ?? []).map((item) => keys.monthIndexEntry(item)), lastEvaluatedKey: response.LastEvaluatedKey };
  }
}

function sumCapacity(consumed: { CapacityUnits?: number }[] | { CapacityUnits?: number } | undefined): number {
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return list.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}
