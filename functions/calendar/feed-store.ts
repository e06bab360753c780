// Calendar feeds in the events table (keys: feed-rules.ts). A feed is two items written in one
// transaction with its owner's count, so the per-owner cap holds under concurrent creates
// (functions/store/owner-scoped-store.ts, which webhook subscriptions use too).
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CHANGE_ITEM } from '../changes/change-event.ts';
import { OwnerScopedStore, type OwnerCount } from '../store/owner-scoped-store.ts';
import {
  CALENDAR_FEEDS,
  CALENDAR_KEYS,
  CalendarFeedLimitError,
  CalendarFeedNotFoundError,
  CalendarFeedThrottledError,
} from './feed-rules.ts';

export interface CalendarFeed {
  id: string;
  owner: string;
  label?: string;
  createdAt: string;
  /** `<keyId>$<MAC>` of the token (feed-tokens.ts); never the token. */
  tokenHash: string;
}

function fromItem(item: Record<string, unknown>): CalendarFeed {
  return {
    id: item.id as string,
    owner: item.owner as string,
    ...(typeof item.label === 'string' ? { label: item.label } : {}),
    createdAt: item.createdAt as string,
    tokenHash: item.tokenHash as string,
  };
}

function ownerCount(owner: string): OwnerCount {
  return { key: CALENDAR_KEYS.ownerCount(owner), attribute: 'feeds', cap: CALENDAR_FEEDS.perOwner };
}

export class CalendarFeedsStore extends OwnerScopedStore {
  /** Stores the feed under its token's hash (what the GET reads) and in its owner's list. */
  async create(feed: CalendarFeed): Promise<void> {
    await this.createCounted(
      ownerCount(feed.owner),
      [
        { ...CALENDAR_KEYS.feed(feed.tokenHash), ...feed },
        { ...CALENDAR_KEYS.ownerEntry(feed.owner, feed.id), ...feed },
      ],
      () => new CalendarFeedLimitError(),
    );
  }

  /** The owner's feeds, oldest first. */
  async list(owner: string): Promise<CalendarFeed[]> {
    const feeds: CalendarFeed[] = [];
    const items = this.queryEveryItem({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': CALENDAR_KEYS.ownerPartition(owner), ':prefix': 'FEED#' },
      ConsistentRead: true,
    });
    for await (const item of items) feeds.push(fromItem(item));
    return feeds.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  }

  /** Revokes the owner's feed `id`: its token stops working at once (the GET reads strongly consistently). */
  async delete(owner: string, id: string): Promise<void> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: CALENDAR_KEYS.ownerEntry(owner, id), ConsistentRead: true }),
      this.options(),
    );
    if (!Item) throw new CalendarFeedNotFoundError(id);
    const feed = fromItem(Item);
    // The owner's entry first: gone means revoked meanwhile by another request.
    await this.deleteCounted(
      ownerCount(owner),
      [CALENDAR_KEYS.ownerEntry(owner, id), CALENDAR_KEYS.feed(feed.tokenHash)],
      () => new CalendarFeedNotFoundError(id),
    );
  }

  /** The feed stored under the first of `tokenHashes` that names one (feed-tokens.ts), or undefined. */
  async findByTokenHash(tokenHashes: readonly string[]): Promise<CalendarFeed | undefined> {
    for (const tokenHash of tokenHashes) {
      const { Item } = await this.client.send(
        new GetCommand({ TableName: this.tableName, Key: CALENDAR_KEYS.feed(tokenHash), ConsistentRead: true }),
        this.options(),
      );
      if (Item) return fromItem(Item);
    }
    return undefined;
  }

  /**
   * Counts one request of `feed` in the current window (fixed windows of CALENDAR_FEEDS.windowSeconds);
   * over CALENDAR_FEEDS.requestsPerWindow, a CalendarFeedThrottledError (429) naming when the window ends.
   */
  async countRequest(feed: CalendarFeed, nowMs = Date.now()): Promise<void> {
    const window = CALENDAR_FEEDS.windowSeconds;
    const windowStart = Math.floor(nowMs / 1000 / window) * window;
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: CALENDAR_KEYS.requests(feed.tokenHash, windowStart),
          UpdateExpression: 'ADD requests :one SET #expiresAt = :expiresAt',
          ConditionExpression: 'attribute_not_exists(requests) OR requests < :max',
          ExpressionAttributeNames: { '#expiresAt': CHANGE_ITEM.expiresAtAttribute },
          ExpressionAttributeValues: { ':one': 1, ':max': CALENDAR_FEEDS.requestsPerWindow, ':expiresAt': windowStart + 2 * window },
        }),
        this.options(),
      );
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') {
        throw new CalendarFeedThrottledError(Math.max(1, windowStart + window - Math.floor(nowMs / 1000)));
      }
      throw error;
    }
  }
}
