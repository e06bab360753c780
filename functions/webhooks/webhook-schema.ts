// The webhook subscription API's requests, validated at the edge (valibot), and the answers'
// shapes. The OpenAPI document takes its schemas from these.
import * as v from 'valibot';
import { CHANGE_TYPES } from '../changes/change-event.ts';

/** A subscription id: `wh_` and 22 base64url characters (128 random bits). */
export const SUBSCRIPTION_ID_PATTERN = /^wh_[A-Za-z0-9_-]{22}$/;
/** Long enough for any real endpoint; the URL rules are in webhook-url.ts. */
export const MAX_URL_LENGTH = 2048;

export const SubscriptionId = v.pipe(v.string(), v.regex(SUBSCRIPTION_ID_PATTERN, 'must be a subscription id (wh_ and 22 characters)'));

export const SubscriptionPathParameters = v.object({ subscriptionId: SubscriptionId }, 'must name a subscription');

export const ChangeTypes = v.pipe(
  v.array(v.picklist(CHANGE_TYPES, `must be one of ${CHANGE_TYPES.join(', ')}`)),
  v.minLength(1, 'must name at least one type'),
  v.check((types) => new Set(types).size === types.length, 'must not repeat a type'),
);

export const CreateSubscriptionRequest = v.strictObject({
  url: v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
  ),
  types: v.optional(ChangeTypes),
});
export type CreateSubscriptionInput = v.InferOutput<typeof CreateSubscriptionRequest>;

export const ReplayRequest = v.strictObject({
  since: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(1024, 'must be at most 1024 characters')),
});

/** What GET answers of a subscription (never its secret). */
export interface SubscriptionView {
  id: string;
  url: string;
  types: string[];
  owner: string;
  enabled: boolean;
  createdAt: string;
  /** Why it is disabled (a 410 from the receiver), when it is. */
  disabledReason?: string;
}

/** The answer of POST /webhook-subscriptions: the only time the secret is shown. */
export interface CreatedSubscription {
  id: string;
  url: string;
  types: string[];
  secret: string;
  createdAt: string;
}

/** One delivery attempt, as GET .../deliveries lists it. */
export interface DeliveryAttempt {
  time: string;
  changeId: string;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why there was no usable answer (timeout, refused address, connection error). */
  error?: string;
  durationMs: number;
  /**
   * `delivered` (2xx), `retrying` (another attempt follows on the schedule), `failed` (the last
   * attempt: the message is dead-lettered), `disabled` (a 410 disabled the subscription), or
   * `skipped` (the subscription was disabled).
   */
  outcome: 'delivered' | 'retrying' | 'failed' | 'disabled' | 'skipped';
}
