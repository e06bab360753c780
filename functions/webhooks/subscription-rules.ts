// The rules of webhook subscriptions that need no AWS SDK (the CDK app and the OpenAPI generator
// read them too): key design, caps, the secret overlap, and the errors of the subscription store.
import { HttpProblem } from '../events/problems.ts';

/** The cap on subscriptions per owner. */
export const SUBSCRIPTIONS_PER_OWNER = 10;
/** How long the old secret keeps signing after a rotation. */
export const SECRET_OVERLAP_SECONDS = 24 * 3600;
/** How long an attempt stays in the deliveries list. */
export const ATTEMPT_RETENTION_SECONDS = 7 * 24 * 3600;
/** The most attempts GET .../deliveries lists, newest first. */
export const ATTEMPTS_LISTED = 100;

export const WEBHOOK_KEYS = {
  /** The partition of every subscription and owner count. */
  partition: 'WEBHOOKS',
  subscription: (id: string) => ({ pk: 'WEBHOOKS', sk: `SUBSCRIPTION#${id}` }),
  ownerCount: (owner: string) => ({ pk: 'WEBHOOKS', sk: `OWNER#${owner}` }),
  /** A subscription's delivery attempts: `WEBHOOK#<id>`, sorted by time. */
  attemptsPartition: (id: string) => `WEBHOOK#${id}`,
  /** One delivery's progress (its queue message's attempts), beside the subscription's attempts. */
  delivery: (id: string, messageId: string) => ({ pk: `WEBHOOK#${id}`, sk: `DELIVERY#${messageId}` }),
  /** The LeadingKeys the webhook functions are confined to (lib/cdk/function-permissions.ts). */
  leadingKeys: ['WEBHOOKS', 'WEBHOOK#*'],
} as const;

/**
 * The one encryption context key of every Encrypt and Decrypt of a secret, its value the
 * subscription's id (functions/webhooks/webhook-secrets.ts); the functions' IAM grants on the key
 * require it (lib/cdk/function-permissions.ts).
 */
export const SECRET_ENCRYPTION_CONTEXT_KEY = 'subscriptionId';

/** A secret as stored: its KMS ciphertext and, once replaced, when it stops signing. */
export interface StoredSecret {
  ciphertext: string;
  /** Epoch seconds; absent for the current secret. */
  retiresAt?: number;
}

export class SubscriptionNotFoundError extends HttpProblem {
  override name = 'SubscriptionNotFoundError';
  constructor(id: string) {
    super('not-found', `No webhook subscription has the id ${id}`);
  }
}

export class SubscriptionLimitError extends HttpProblem {
  override name = 'SubscriptionLimitError';
  constructor(owner: string) {
    super('subscription-limit', `${owner} already has ${SUBSCRIPTIONS_PER_OWNER} webhook subscriptions; delete one first`, {
      detail: `An owner may have at most ${SUBSCRIPTIONS_PER_OWNER} webhook subscriptions; delete one first`,
    });
  }
}

/** The secrets that sign now: the current one and any replaced less than SECRET_OVERLAP_SECONDS ago. */
export function signingSecrets(secrets: readonly StoredSecret[], nowSeconds = Math.floor(Date.now() / 1000)): StoredSecret[] {
  return secrets.filter((secret) => secret.retiresAt === undefined || secret.retiresAt > nowSeconds);
}
