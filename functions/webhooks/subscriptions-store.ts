// Webhook subscriptions and their recent delivery attempts, in the events table (key design:
// functions/store/README.md, "Webhooks"). Subscriptions share one partition, WEBHOOKS: there are
// few (SUBSCRIPTIONS_PER_OWNER each), and the stream consumer reads them all with one Query per
// batch. Each owner's count sits beside them and is changed in the same transaction as a create or
// delete, so the cap holds under concurrent creates (functions/store/owner-scoped-store.ts).
// Attempts live in WEBHOOK#<id> and expire by TTL (the table's `expiresAt`, which the change items
// use too), beside each delivery's progress (DELIVERY#<message id>: attempts made, the next one's
// time), written in the same transaction as each attempt, so the count is of attempts made, each
// counted once.
import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { CHANGE_ITEM, type ChangeType } from '../changes/change-event.ts';
import { HttpProblem } from '../events/problems.ts';
import { OwnerScopedStore, type OwnerCount } from '../store/owner-scoped-store.ts';
import { conditionFailedAt } from '../store/table-store.ts';
import { WEBHOOK_PIPELINE } from './pipeline-settings.ts';
import type { DeliveryProgress } from './retry-schedule.ts';
import { AttemptItem, ProgressItem, SubscriptionItem } from './stored-items.ts';
import type { DeliveryAttempt, SubscriptionView } from './webhook-schema.ts';
import {
  ATTEMPT_RETENTION_SECONDS,
  ATTEMPTS_LISTED,
  SECRET_OVERLAP_SECONDS,
  signingSecrets,
  SubscriptionLimitError,
  SubscriptionNotFoundError,
  SUBSCRIPTIONS_PER_OWNER,
  WEBHOOK_KEYS,
  type StoredSecret,
} from './subscription-rules.ts';

export { SECRET_OVERLAP_SECONDS, signingSecrets, SubscriptionNotFoundError, type StoredSecret };

export interface Subscription {
  id: string;
  owner: string;
  url: string;
  types: ChangeType[];
  enabled: boolean;
  createdAt: string;
  disabledReason?: string;
  secrets: StoredSecret[];
}

export function newSubscriptionId(): string {
  return `wh_${randomBytes(16).toString('base64url')}`;
}

export function subscriptionView(subscription: Subscription): SubscriptionView {
  const { id, url, types, owner, enabled, createdAt, disabledReason } = subscription;
  return { id, url, types, owner, enabled, createdAt, ...(disabledReason ? { disabledReason } : {}) };
}

function fromItem(item: unknown): Subscription {
  const { disabledReason, secrets, ...rest } = v.parse(SubscriptionItem, item);
  return {
    ...rest,
    ...(disabledReason === undefined ? {} : { disabledReason }),
    secrets: secrets.map(({ ciphertext, retiresAt }) => ({ ciphertext, ...(retiresAt === undefined ? {} : { retiresAt }) })),
  };
}

function ownerCount(owner: string): OwnerCount {
  return { key: WEBHOOK_KEYS.ownerCount(owner), attribute: 'subscriptions', cap: SUBSCRIPTIONS_PER_OWNER };
}

export class SubscriptionsStore extends OwnerScopedStore {
  async create(subscription: Subscription): Promise<void> {
    await this.createCounted(
      ownerCount(subscription.owner),
      [{ ...WEBHOOK_KEYS.subscription(subscription.id), ...subscription }],
      () => new SubscriptionLimitError(subscription.owner),
    );
  }

  async get(id: string): Promise<Subscription | undefined> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: WEBHOOK_KEYS.subscription(id), ConsistentRead: true }),
      this.options(),
    );
    return Item ? fromItem(Item) : undefined;
  }

  /** Every subscription (an editor's list, the consumer's fan-out), or those of `owner`. */
  async list(owner?: string): Promise<Subscription[]> {
    const subscriptions: Subscription[] = [];
    const items = this.queryEveryItem({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': WEBHOOK_KEYS.partition, ':prefix': 'SUBSCRIPTION#' },
      ConsistentRead: true,
    });
    for await (const item of items) subscriptions.push(fromItem(item));
    return owner === undefined ? subscriptions : subscriptions.filter((subscription) => subscription.owner === owner);
  }

  async delete(subscription: Subscription): Promise<void> {
    await this.deleteCounted(
      ownerCount(subscription.owner),
      [WEBHOOK_KEYS.subscription(subscription.id)],
      () => new SubscriptionNotFoundError(subscription.id),
    );
  }

  /**
   * Makes `ciphertext` the current secret; the one it replaces signs on for SECRET_OVERLAP_SECONDS,
   * secrets already retired are dropped. Conditional on the secrets read, so two rotations at once
   * cannot lose one's secret (the loser is a 409).
   */
  async rotateSecret(subscription: Subscription, ciphertext: string, nowSeconds = Math.floor(Date.now() / 1000)): Promise<void> {
    const kept = signingSecrets(subscription.secrets, nowSeconds).map((secret) => ({
      ciphertext: secret.ciphertext,
      retiresAt: secret.retiresAt ?? nowSeconds + SECRET_OVERLAP_SECONDS,
    }));
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: WEBHOOK_KEYS.subscription(subscription.id),
          UpdateExpression: 'SET secrets = :secrets',
          ConditionExpression: 'secrets = :read',
          ExpressionAttributeValues: { ':secrets': [{ ciphertext }, ...kept], ':read': subscription.secrets },
        }),
        this.options(),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new HttpProblem('conflict', 'The subscription changed while its secret was being rotated; nothing was changed, retry');
      }
      throw error;
    }
  }

  /** Enables or disables (with its reason) an existing subscription. */
  async setEnabled(id: string, enabled: boolean, reason?: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: WEBHOOK_KEYS.subscription(id),
          UpdateExpression: enabled ? 'SET enabled = :enabled REMOVE disabledReason' : 'SET enabled = :enabled, disabledReason = :reason',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':enabled': enabled, ...(enabled ? {} : { ':reason': reason ?? 'disabled' }) },
        }),
        this.options(),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new SubscriptionNotFoundError(id);
      throw error;
    }
  }

  /** An attempt item of the deliveries log (GET .../deliveries), kept ATTEMPT_RETENTION_SECONDS. */
  private attemptItem(subscriptionId: string, attempt: DeliveryAttempt) {
    return {
      pk: WEBHOOK_KEYS.attemptsPartition(subscriptionId),
      sk: `ATTEMPT#${attempt.time}#${randomBytes(4).toString('hex')}`,
      ...attempt,
      [CHANGE_ITEM.expiresAtAttribute]: Math.floor(Date.parse(attempt.time) / 1000) + ATTEMPT_RETENTION_SECONDS,
    };
  }

  /** Logs a receive that made no attempt (`skipped`: the subscription is disabled). */
  async recordAttempt(subscriptionId: string, attempt: DeliveryAttempt): Promise<void> {
    await this.client.send(new PutCommand({ TableName: this.tableName, Item: this.attemptItem(subscriptionId, attempt) }), this.options());
  }

  /** The progress of one delivery (queue message `messageId`): attempts made, when the next is due, whether it was dead-lettered. */
  async progress(subscriptionId: string, messageId: string): Promise<DeliveryProgress & { deadLettered: boolean }> {
    const { Item } = await this.client.send(
      new GetCommand({ TableName: this.tableName, Key: WEBHOOK_KEYS.delivery(subscriptionId, messageId), ConsistentRead: true }),
      this.options(),
    );
    return Item ? v.parse(ProgressItem, Item) : { attempts: 0, nextAttemptAt: 0, deadLettered: false };
  }

  /** Notes that delivery `messageId` went to the dead-letter queue: received again, it was redriven. */
  async markDeadLettered(subscriptionId: string, messageId: string): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: WEBHOOK_KEYS.delivery(subscriptionId, messageId),
        UpdateExpression: 'SET deadLettered = :true',
        ExpressionAttributeValues: { ':true': true },
      }),
      this.options(),
    );
  }

  /** A redriven delivery starts the schedule again (once: a concurrent restart finds it done). */
  async restartSchedule(subscriptionId: string, messageId: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: WEBHOOK_KEYS.delivery(subscriptionId, messageId),
          UpdateExpression: 'SET attempts = :zero, nextAttemptAt = :zero REMOVE deadLettered',
          ConditionExpression: 'deadLettered = :true',
          ExpressionAttributeValues: { ':zero': 0, ':true': true },
        }),
        this.options(),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /**
   * Logs attempt number `number` of delivery `messageId` and its progress in one transaction,
   * conditional on the attempts before it being recorded: a repeat of the same attempt (its
   * invocation run twice) is not counted again. False for such a repeat.
   */
  async recordCountedAttempt(
    subscriptionId: string,
    messageId: string,
    number: number,
    attempt: DeliveryAttempt,
    nextAttemptAt: number,
  ): Promise<boolean> {
    const expiresAt = Math.floor(Date.parse(attempt.time) / 1000) + WEBHOOK_PIPELINE.queue.retentionSeconds;
    try {
      await this.client.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: this.tableName, Item: this.attemptItem(subscriptionId, attempt) } },
            {
              Update: {
                TableName: this.tableName,
                Key: WEBHOOK_KEYS.delivery(subscriptionId, messageId),
                UpdateExpression: 'SET attempts = :number, nextAttemptAt = :next, changeId = :change, #expires = :expires',
                ConditionExpression: number === 1 ? 'attribute_not_exists(attempts) OR attempts = :before' : 'attempts = :before',
                ExpressionAttributeNames: { '#expires': CHANGE_ITEM.expiresAtAttribute },
                ExpressionAttributeValues: {
                  ':number': number,
                  ':next': nextAttemptAt,
                  ':change': attempt.changeId,
                  ':expires': expiresAt,
                  ':before': number - 1,
                },
              },
            },
          ],
        }),
        this.options(),
      );
      return true;
    } catch (error) {
      if (conditionFailedAt(error, 1)) return false;
      throw error;
    }
  }

  async listAttempts(subscriptionId: string): Promise<DeliveryAttempt[]> {
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': WEBHOOK_KEYS.attemptsPartition(subscriptionId), ':prefix': 'ATTEMPT#' },
        ScanIndexForward: false,
        Limit: ATTEMPTS_LISTED,
      }),
      this.options(),
    );
    return (page.Items ?? []).map((item) => {
      const { time, changeId, status, error, durationMs, outcome } = v.parse(AttemptItem, item);
      return {
        time,
        changeId,
        ...(status === undefined ? {} : { status }),
        ...(error === undefined ? {} : { error }),
        durationMs,
        outcome,
      };
    });
  }
}
