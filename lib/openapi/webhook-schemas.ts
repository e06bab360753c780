// The JSON Schemas of the webhook subscription operations and of the change a receiver gets, for
// the document's components.schemas. Written here as JSON Schema: the answers are built by the
// handlers from TypeScript types (functions/webhooks/webhook-schema.ts), the requests' rules
// restated from the valibot schemas there. The operations that use them: webhook-operations.ts.
import { CHANGE_SOURCE, CHANGE_TYPES } from '../../functions/changes/change-event.ts';
import { MAX_URL_LENGTH, SUBSCRIPTION_ID_PATTERN } from '../../functions/webhooks/webhook-schema.ts';
import { schemaRef } from './document-schemas.ts';

const ChangeTypes = {
  type: 'array',
  items: { type: 'string', enum: [...CHANGE_TYPES] },
  minItems: 1,
  uniqueItems: true,
  description: 'The change types delivered',
};

/** components.schemas of the webhook operations. */
export const WEBHOOK_SCHEMAS = {
  CreateWebhookSubscriptionRequest: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_URL_LENGTH,
        description:
          'Where changes are POSTed: `https`, resolving only to public addresses (a 422 refuses the IANA special-purpose entries that are ' +
          'not globally reachable, such as loopback, private, CGNAT, link-local and unique-local, multicast, and IPv6 forms carrying an IPv4 ' +
          'address: IPv4-compatible, translated, NAT64, 6to4, Teredo). The local run also accepts `http://127.0.0.1:<port>/...` and `http://localhost:<port>/...`.',
      },
      types: { ...ChangeTypes, description: 'The change types to receive; all three when absent' },
    },
  },
  CreatedWebhookSubscription: {
    type: 'object',
    required: ['id', 'url', 'types', 'secret', 'createdAt'],
    properties: {
      id: { type: 'string', pattern: SUBSCRIPTION_ID_PATTERN.source },
      url: { type: 'string' },
      types: ChangeTypes,
      secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', description: 'The signing secret, shown only in this answer' },
      createdAt: { type: 'string', format: 'date-time' },
    },
  },
  WebhookSubscription: {
    type: 'object',
    required: ['id', 'url', 'types', 'owner', 'enabled', 'createdAt'],
    properties: {
      id: { type: 'string', pattern: SUBSCRIPTION_ID_PATTERN.source },
      url: { type: 'string' },
      types: ChangeTypes,
      owner: { type: 'string', description: 'The user who created it' },
      enabled: { type: 'boolean', description: 'False once the receiver answered 410 Gone (POST .../enable turns it on again)' },
      createdAt: { type: 'string', format: 'date-time' },
      disabledReason: { type: 'string' },
    },
  },
  WebhookSubscriptionList: {
    type: 'object',
    required: ['subscriptions'],
    properties: { subscriptions: { type: 'array', items: schemaRef('WebhookSubscription') } },
  },
  RotatedWebhookSecret: {
    type: 'object',
    required: ['id', 'secret', 'previousSecretExpiresAt'],
    properties: {
      id: { type: 'string' },
      secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' },
      previousSecretExpiresAt: { type: 'string', format: 'date-time', description: 'Until then the replaced secret signs too' },
    },
  },
  ReplayRequest: {
    type: 'object',
    required: ['since'],
    additionalProperties: false,
    properties: { since: { type: 'string', minLength: 1, maxLength: 1024, description: 'A cursor of GET /special-events/changes' } },
  },
  ReplayAccepted: {
    type: 'object',
    required: ['queued', 'next', 'complete'],
    properties: {
      queued: { type: 'integer', minimum: 0, description: 'Changes queued for delivery again' },
      next: { type: 'string', description: 'The cursor after the last change read; replay from it when `complete` is false' },
      complete: {
        type: 'boolean',
        description:
          "True when the read reached the feed's end; the newest changes are held back as in the feed, so replay from `next` later for them",
      },
    },
  },
  WebhookDeliveryList: {
    type: 'object',
    required: ['deliveries'],
    properties: {
      deliveries: {
        type: 'array',
        items: {
          type: 'object',
          required: ['time', 'changeId', 'durationMs', 'outcome'],
          properties: {
            time: { type: 'string', format: 'date-time' },
            changeId: { type: 'string' },
            status: { type: 'integer', description: "The receiver's HTTP status" },
            error: { type: 'string', description: 'Why there was no answer' },
            durationMs: { type: 'integer', minimum: 0 },
            outcome: { type: 'string', enum: ['delivered', 'retrying', 'failed', 'disabled', 'skipped'] },
          },
        },
      },
    },
  },
  ChangeEvent: {
    type: 'object',
    description: 'A change to a special event: a CloudEvents 1.0 object in JSON (structured mode)',
    required: ['specversion', 'id', 'source', 'type', 'subject', 'time', 'datacontenttype', 'data'],
    properties: {
      specversion: { const: '1.0' },
      id: { type: 'string', pattern: '^[^.]+$', description: 'Unique per change, the same on every read and delivery' },
      source: { const: CHANGE_SOURCE },
      type: { type: 'string', enum: [...CHANGE_TYPES] },
      subject: { type: 'string', description: 'The eventId' },
      time: { type: 'string', format: 'date-time', description: 'The commit time' },
      datacontenttype: { const: 'application/json' },
      data: {
        type: 'object',
        required: ['eventId', 'version', 'event', 'previous'],
        properties: {
          eventId: { type: 'string' },
          version: { type: 'integer', minimum: 1 },
          event: { oneOf: [schemaRef('SpecialEvent'), { type: 'null' }] },
          previous: { oneOf: [schemaRef('SpecialEvent'), { type: 'null' }] },
        },
      },
    },
  },
} as const;
