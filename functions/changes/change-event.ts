// A change to a special event, as partners read it from the feed (GET /special-events/changes) and
// receive it by webhook: one CloudEvents 1.0 object in JSON (structured mode), the same bytes
// every time (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/spec.md).
import type { SpecialEvent } from '../events/event-schema.ts';

export const CHANGE_SOURCE = '/v1.1/special-events';

export const CHANGE_TYPES = ['museum.special-event.created', 'museum.special-event.updated', 'museum.special-event.deleted'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export interface ChangeEvent {
  specversion: '1.0';
  /** Unique per change, the same on every read and delivery; contains no `.` (Standard Webhooks signs `{id}.{timestamp}.{body}`). */
  id: string;
  source: typeof CHANGE_SOURCE;
  type: ChangeType;
  /** The eventId. */
  subject: string;
  /** The commit time, RFC 3339. */
  time: string;
  datacontenttype: 'application/json';
  data: {
    eventId: string;
    /** The number in the event's ETag after the change; for a deletion, the deleted version + 1. */
    version: number;
    /** The six fields after the change; null for a deletion. */
    event: SpecialEvent | null;
    /** The six fields before the change; null for a creation. */
    previous: SpecialEvent | null;
  };
}

/**
 * The change (outbox) item, written in the same TransactWriteItems as the write it records, so a
 * change exists exactly when the write committed. Its stream record (INSERT) is what the webhook
 * consumer reads; these attribute names are the contract between the store and the consumer.
 */
export const CHANGE_ITEM = {
  /** Every change item's `pk` starts with this; nothing else the store writes does. */
  pkPrefix: 'CHANGES#',
  /** The ChangeEvent as JSON text: exactly the body served and delivered. */
  cloudEventAttribute: 'cloudEvent',
  /** The ChangeEvent's `type` (for stream filters and subscription types). */
  typeAttribute: 'changeType',
  /** The eventId (deliveries of one event's changes keep their order). */
  eventIdAttribute: 'eventId',
  /** DynamoDB TTL attribute (epoch seconds): retention is at least 30 days. */
  expiresAtAttribute: 'expiresAt',
} as const;
