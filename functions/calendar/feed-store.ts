// Calendar feeds in the events table (keys: feed-rules.ts). A feed is two items written in one
// transaction with its owner's count, so the per-owner cap holds under concurrent creates (as
// webhook subscriptions do: functions/webhooks/subscriptions-store.ts).
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CHANGE_ITEM } from '../changes/change-event.ts';
import { requiredEnv } from '../environment.ts';
import { getDocumentClient } from '../store/dynamodb-client.ts';
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

function cancelledAt(error: unknown, index: number): boolean {
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return (error as Error).name === 'TransactionCanceledException' && reasons?.[index]?.Code === 'ConditionalCheckFailed';
}

export class CalendarFeedsStore {
  private readonly client: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly signal: AbortSignal | undefined;

  constructor(client: DynamoDBDocumentClient, tableName: string, signal?: AbortSignal) {
    this.client = client;
    this.tableName = tableName;
    this.signal = signal;
  }

  private options() {
    return this.signal ? { abortSignal: this.signal } : {};
  }

  async create(feed: CalendarFeed): Promise<void> {
    const put = (key: { pk: string; sk: string }) => ({
      Put: { TableName: this.tableName, Item: { ...key, ...feed }, ConditionExpression: 'attribute_not_exists(pk)' },
    });
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: CALENDAR_KEYS.ownerCount(feed.owner),
                UpdateExpression: 'ADD feeds :one',
                ConditionExpression: 'attribute_not_exists(feeds) OR feeds < :cap',
                ExpressionAttributeValues: { ':one': 1, ':cap': CALENDAR_FEEDS.perOwner },
              },
            },
            put(CALENDAR_KEYS.feed(feed.tokenHash)),
            put(CALENDAR_KEYS.ownerEntry(feed.owner, feed.id)),
          ],
        }),
        this.options(),
      );
    } catch (error) {
      if (cancelledAt(error, 0)) throw new CalendarFeedLimitError();
      throw error;
    }
  }

  /** The owner's feeds, oldest first. */
  async list(owner: string): Promise<CalendarFeed[]> {
    const feeds: CalendarFeed[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': CALENDAR_KEYS.ownerPartition(owner), ':prefix': 'FEED#' },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
        this.options(),
      );
      feeds.push(...(page.Items ?? []).map(fromItem));
      start = page.LastEvaluatedKey;
    } while (start);
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
    const remove = (key: { pk: string; sk: string }) => ({
      Delete: { TableName: this.tableName, Key: key, ConditionExpression: 'attribute_exists(pk)' },
    });
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            remove(CALENDAR_KEYS.ownerEntry(owner, id)),
            remove(CALENDAR_KEYS.feed(feed.tokenHash)),
            {
              Update: {
                TableName: this.tableName,
                Key: CALENDAR_KEYS.ownerCount(owner),
                UpdateExpression: 'ADD feeds :minusOne',
                ExpressionAttributeValues: { ':minusOne': -1 },
              },
            },
          ],
        }),
        this.options(),
      );
    } catch (error) {
      // Revoked meanwhile by another request.
      if (cancelledAt(error, 0)) throw new CalendarFeedNotFoundError(id);
      throw error;
    }
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

export function calendarFeedsStore(signal?: AbortSignal): CalendarFeedsStore {
  return new CalendarFeedsStore(getDocumentClient(), requiredEnv('TABLE_NAME'), signal);
}
