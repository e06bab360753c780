// Items of which one owner may hold at most a few (webhook subscriptions, calendar feeds): beside
// them, the owner's count item. A create adds one to the count and a delete takes one off, in the
// same transaction as the items, so the cap holds however many creates race: of N+1 concurrent
// creates at N-1, one commits and the others are refused.
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedAt, TableStore } from './table-store.ts';

interface ItemKey {
  pk: string;
  sk: string;
}

/** An owner's count: its item's key, the attribute that counts, and the most it may reach. */
export interface OwnerCount {
  key: ItemKey;
  attribute: string;
  cap: number;
}

export abstract class OwnerScopedStore extends TableStore {
  /**
   * Puts `items` (each new: an existing key fails the transaction) as one more of the owner's, in
   * one transaction with the count; when the count is at its cap already, `limitError()`.
   */
  protected async createCounted(count: OwnerCount, items: (ItemKey & Record<string, unknown>)[], limitError: () => Error): Promise<void> {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: this.tableName,
                Key: count.key,
                UpdateExpression: 'ADD #count :one',
                ConditionExpression: 'attribute_not_exists(#count) OR #count < :cap',
                ExpressionAttributeNames: { '#count': count.attribute },
                ExpressionAttributeValues: { ':one': 1, ':cap': count.cap },
              },
            },
            ...items.map((Item) => ({ Put: { TableName: this.tableName, Item, ConditionExpression: 'attribute_not_exists(pk)' } })),
          ],
        }),
        this.options(),
      );
    } catch (error) {
      if (conditionFailedAt(error, 0)) throw limitError();
      throw error;
    }
  }

  /**
   * Deletes the items at `keys` (each must exist) as one fewer of the owner's, in one transaction
   * with the count; when the first is gone (deleted meanwhile by another request), `notFoundError()`.
   */
  protected async deleteCounted(count: OwnerCount, keys: ItemKey[], notFoundError: () => Error): Promise<void> {
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            ...keys.map((Key) => ({ Delete: { TableName: this.tableName, Key, ConditionExpression: 'attribute_exists(pk)' } })),
            {
              Update: {
                TableName: this.tableName,
                Key: count.key,
                UpdateExpression: 'ADD #count :minusOne',
                ExpressionAttributeNames: { '#count': count.attribute },
                ExpressionAttributeValues: { ':minusOne': -1 },
              },
            },
          ],
        }),
        this.options(),
      );
    } catch (error) {
      if (conditionFailedAt(error, 0)) throw notFoundError();
      throw error;
    }
  }
}
