// ChangeFeedReader: one page of the change feed, read from the change partitions (CHANGES#<day>#<shard>)
// in commit order. Key design and hold-back: functions/store/README.md ("The change feed").
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { CHANGE_ITEM } from '../changes/change-event.ts';
import {
  CHANGE_FEED,
  changeKeys,
  daysBetween,
  endOfDay,
  mergeShards,
  type FeedPosition,
  type FeedWindow,
  type ShardRead,
} from '../changes/change-feed.ts';
import { TableStore } from './table-store.ts';

export interface ChangePage {
  /** Each change's CloudEvent as stored: the exact JSON text served and delivered. */
  changes: string[];
  /** Where the next page starts. */
  next: FeedPosition;
  /**
   * Whether the page reached the window's end (the hold-back boundary): every change committed
   * before it has been handed out. When false, more changes may follow at once: read from `next`.
   */
  caughtUp: boolean;
}

export class ChangeFeedReader extends TableStore {
  /**
   * Up to `limit` changes after `window.from` and at most `window.until`, in commit order, day by
   * day, each day's shards queried together and merged. A page stops before `window.until` after
   * `limit` changes, CHANGE_FEED.maxPageBytes of text, a shard's query stopping early,
   * CHANGE_FEED.maxQueriesPerPage queries (enough for every day the feed keeps) or, between days,
   * CHANGE_FEED.pageTimeBudgetMs, and says so (`caughtUp` false). Queries are strongly consistent:
   * behind the hold-back boundary every committed change is there, so a cursor never passes one.
   */
  async page(window: FeedWindow, limit: number): Promise<ChangePage> {
    const { changes, next } = await this.walk(window, limit);
    return { changes, next, caughtUp: next >= window.until };
  }

  private async walk(window: FeedWindow, limit: number): Promise<Omit<ChangePage, 'caughtUp'>> {
    const changes: string[] = [];
    let position = window.from;
    let bytes = 0;
    let queries = 0;
    const deadline = Date.now() + CHANGE_FEED.pageTimeBudgetMs;
    if (window.from >= window.until) return { changes, next: position };
    for (const day of daysBetween(window.from, window.until)) {
      if (queries + CHANGE_FEED.shards > CHANGE_FEED.maxQueriesPerPage || (queries > 0 && Date.now() > deadline)) break;
      const dayEnd = endOfDay(day) < window.until ? endOfDay(day) : window.until;
      const wanted = limit - changes.length;
      const reads = await Promise.all(
        Array.from({ length: CHANGE_FEED.shards }, (_, shard) =>
          this.readShard(changeKeys.partition(day, shard), position, dayEnd, wanted),
        ),
      );
      queries += CHANGE_FEED.shards;
      const { items, completeTo } = mergeShards(reads, dayEnd);
      for (const item of items) {
        const size = Buffer.byteLength(item.cloudEvent);
        if (changes.length >= limit || (changes.length > 0 && bytes + size > CHANGE_FEED.maxPageBytes)) return { changes, next: position };
        changes.push(item.cloudEvent);
        bytes += size;
        position = item.sk;
      }
      // A shard stopped early: the page ends where all shards are known.
      if (completeTo < dayEnd) return { changes, next: position };
      position = dayEnd;
      if (changes.length >= limit) break;
    }
    return { changes, next: position };
  }

  /** The changes of one partition after `from` and up to `until`, at most `limit` of them (one Query page, at most 1 MB). */
  private async readShard(partition: string, from: FeedPosition, until: FeedPosition, limit: number): Promise<ShardRead> {
    // BETWEEN includes `from`, which is a change already handed out when it is one: one more, then dropped.
    const answer = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :until',
        ExpressionAttributeValues: { ':pk': partition, ':from': from, ':until': until },
        ProjectionExpression: `sk, ${CHANGE_ITEM.cloudEventAttribute}`,
        ConsistentRead: true,
        Limit: limit + 1,
      }),
      this.options(),
    );
    const items = (answer.Items ?? [])
      .filter((item) => item.sk !== from)
      .map((item) => ({ sk: String(item.sk) as FeedPosition, cloudEvent: String(item[CHANGE_ITEM.cloudEventAttribute]) }));
    return { items, truncated: answer.LastEvaluatedKey !== undefined };
  }
}
