// The items of the webhook partitions as stored (their keys: WEBHOOK_KEYS, subscription-rules.ts),
// decoded with valibot when read: an item that does not fit is an error, never a guess.
import * as v from 'valibot';
import { CHANGE_TYPES } from '../changes/change-event.ts';

/** A subscription (WEBHOOKS, SUBSCRIPTION#<id>). */
export const SubscriptionItem = v.object({
  id: v.string(),
  owner: v.string(),
  url: v.string(),
  types: v.array(v.picklist(CHANGE_TYPES)),
  enabled: v.boolean(),
  createdAt: v.string(),
  disabledReason: v.optional(v.string()),
  secrets: v.array(v.object({ ciphertext: v.string(), retiresAt: v.optional(v.number()) })),
});

/** An attempt of the deliveries log (WEBHOOK#<id>, ATTEMPT#<time>#<random>). */
export const AttemptItem = v.object({
  time: v.string(),
  changeId: v.string(),
  status: v.optional(v.number()),
  error: v.optional(v.string()),
  durationMs: v.number(),
  outcome: v.picklist(['delivered', 'retrying', 'failed', 'disabled', 'skipped']),
});

/** A delivery's progress (WEBHOOK#<id>, DELIVERY#<message id>). */
export const ProgressItem = v.object({ attempts: v.number(), nextAttemptAt: v.number(), deadLettered: v.optional(v.boolean(), false) });
