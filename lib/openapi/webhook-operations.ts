// What the document says about the webhook subscription operations (functions/webhooks/), and the
// OpenAPI 3.1 `webhooks` entry: the delivery a receiver gets, with its three Standard Webhooks
// headers. The JSON Schemas they name are in webhook-schemas.ts.
import { CHANGE_SOURCE, CHANGE_TYPES } from '../../functions/changes/change-event.ts';
import { HttpProblem } from '../../functions/events/problems.ts';
import { SUBSCRIPTION_ID_PATTERN } from '../../functions/webhooks/webhook-schema.ts';
import { RETRY_DELAYS_SECONDS, MAX_DELIVERY_ATTEMPTS } from '../../functions/webhooks/retry-schedule.ts';
import { SECRET_OVERLAP_SECONDS, SUBSCRIPTIONS_PER_OWNER, SubscriptionNotFoundError } from '../../functions/webhooks/subscription-rules.ts';
import { json, schemaRef } from './document-schemas.ts';
import { exampleEvent } from './examples.ts';
import { ownerScopedCollection } from './owner-scoped-operations.ts';
import { errorExample, problemResponse } from './problem-responses.ts';
import { bodyTooLarge, gatewayTooLarge, unsupportedMediaType } from './request-body-responses.ts';
import type { OperationDetails } from './operations.ts';

const exampleId = 'wh_Zk3v9Qm2T1bXc8LpR4sYdA';
const exampleSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const exampleUrl = 'https://partner.example/museum-webhooks';
const exampleCreatedAt = '2031-04-01T09:30:00.000Z';

const subscriptions = ownerScopedCollection({
  id: {
    name: 'subscriptionId',
    description: 'Identifier of the webhook subscription',
    pattern: SUBSCRIPTION_ID_PATTERN,
    example: exampleId,
  },
  invalidId: {
    description: '`subscriptionId` is malformed, or a query parameter is given',
    example: errorExample(
      new HttpProblem(
        'validation-error',
        'The subscription id is invalid: subscriptionId must be a subscription id (wh_ and 22 characters)',
        {
          errors: [{ field: 'subscriptionId', message: 'must be a subscription id (wh_ and 22 characters)' }],
        },
      ),
      'Not a subscription id',
    ),
  },
  notFound: {
    description: 'No subscription with this id is visible to the caller (a partner sees only its own)',
    example: errorExample(new SubscriptionNotFoundError(exampleId), 'No such subscription'),
  },
});
const { idParameter: subscriptionIdParameter, invalidId, notFound } = subscriptions;
const ownership = 'A partner sees and changes only its own subscriptions; an editor all of them.';
const exampleView = {
  id: exampleId,
  url: exampleUrl,
  types: [...CHANGE_TYPES],
  owner: 'ticketing-partner',
  enabled: true,
  createdAt: exampleCreatedAt,
};

export const WEBHOOK_OPERATIONS = {
  createWebhookSubscription: {
    description:
      `Subscribes a URL to changes. It receives every change of its types committed after this answer, signed with the \`secret\` shown only here (Standard Webhooks). ` +
      `An owner may have at most ${SUBSCRIPTIONS_PER_OWNER} subscriptions.`,
    parameters: [],
    requestBody: {
      required: true,
      content: json(schemaRef('CreateWebhookSubscriptionRequest'), {
        allTypes: { summary: 'Every change', value: { url: exampleUrl } },
        cancellations: { summary: 'Cancellations only', value: { url: exampleUrl, types: ['museum.special-event.deleted'] } },
      }),
    },
    success: {
      description: 'Created: the subscription and its signing secret',
      body: {
        schema: 'CreatedWebhookSubscription',
        example: {
          name: 'created',
          summary: 'A new subscription',
          value: { id: exampleId, url: exampleUrl, types: [...CHANGE_TYPES], secret: exampleSecret, createdAt: exampleCreatedAt },
        },
      },
    },
    errors: {
      400: problemResponse(400, 'The body is not a JSON object with a `url` and optional `types`', {
        invalidBody: errorExample(
          new HttpProblem('validation-error', 'The request body is invalid: types.0 must be one of the change types', {
            errors: [{ field: 'types.0', message: `must be one of ${CHANGE_TYPES.join(', ')}` }],
          }),
          'An unknown type',
        ),
      }),
      409: problemResponse(409, `The owner has ${SUBSCRIPTIONS_PER_OWNER} subscriptions already`, {
        limit: errorExample(
          new HttpProblem(
            'subscription-limit',
            `An owner may have at most ${SUBSCRIPTIONS_PER_OWNER} webhook subscriptions; delete one first`,
          ),
          'Too many subscriptions',
        ),
      }),
      413: bodyTooLarge,
      415: unsupportedMediaType,
      422: problemResponse(422, 'The URL is refused: not `https`, or not resolving to public addresses only', {
        privateAddress: errorExample(
          new HttpProblem('webhook-url-refused', 'The webhook URL is refused: it names 10.0.0.7, which is not a public address', {
            errors: [{ field: 'url', message: 'names 10.0.0.7, which is not a public address' }],
          }),
          'A private address',
        ),
      }),
    },
    mockHeaders: { Location: `webhook-subscriptions/${exampleId}` },
  },
  listWebhookSubscriptions: subscriptions.list(`Lists the caller's subscriptions (an editor's: all). ${ownership}`, {
    description: 'Success: the subscriptions, without their secrets',
    body: {
      schema: 'WebhookSubscriptionList',
      example: { name: 'list', summary: 'One subscription', value: { subscriptions: [exampleView] } },
    },
  }),
  getWebhookSubscription: {
    description: `Returns one subscription, without its secret. ${ownership}`,
    parameters: [subscriptionIdParameter],
    success: {
      description: 'Success: the subscription',
      body: { schema: 'WebhookSubscription', example: { name: 'subscription', summary: 'A subscription', value: exampleView } },
    },
    errors: { 400: invalidId, 404: notFound, 413: gatewayTooLarge },
    mockHeaders: {},
  },
  deleteWebhookSubscription: subscriptions.remove(`Deletes a subscription; deliveries still queued for it are dropped. ${ownership}`),
  rotateWebhookSecret: {
    description: `Makes a new signing secret, shown only in this answer. The one it replaces signs beside it for ${SECRET_OVERLAP_SECONDS / 3600} hours, so every delivery in that time carries two signatures. ${ownership}`,
    parameters: [subscriptionIdParameter],
    success: {
      description: 'Success: the new secret',
      body: {
        schema: 'RotatedWebhookSecret',
        example: {
          name: 'rotated',
          summary: 'A new secret',
          value: { id: exampleId, secret: exampleSecret, previousSecretExpiresAt: '2031-04-02T09:30:00.000Z' },
        },
      },
    },
    errors: {
      400: invalidId,
      404: notFound,
      413: gatewayTooLarge,
      409: problemResponse(409, 'Another rotation changed the secrets at the same time: nothing was changed; retry', {
        concurrentRotation: errorExample(
          new HttpProblem('conflict', 'The subscription changed while its secret was being rotated; nothing was changed, retry'),
          'Two rotations at once',
        ),
      }),
    },
    mockHeaders: {},
  },
  replayWebhookChanges: {
    description:
      'Delivers again the changes after a cursor of `GET /special-events/changes` (of the types the subscription takes), with their original ids and new signatures. ' +
      `At most 1000 changes per request: when \`complete\` is false, replay again from \`next\`. An expired cursor is a 410, as in the feed. ${ownership}`,
    parameters: [subscriptionIdParameter],
    requestBody: {
      required: true,
      content: json(schemaRef('ReplayRequest'), { since: { summary: 'From a cursor', value: { since: 'c_0000000001' } } }),
    },
    success: {
      description: 'Accepted: the changes are queued for delivery',
      body: {
        schema: 'ReplayAccepted',
        example: { name: 'queued', summary: 'Three changes queued', value: { queued: 3, next: 'c_0000000004', complete: true } },
      },
    },
    errors: { 400: invalidId, 404: notFound, 413: bodyTooLarge, 415: unsupportedMediaType },
    mockHeaders: {},
  },
  listWebhookDeliveries: {
    description: `Lists the subscription's recent delivery attempts (the newest 100, kept 7 days), newest first. ${ownership}`,
    parameters: [subscriptionIdParameter],
    success: {
      description: 'Success: the attempts',
      body: {
        schema: 'WebhookDeliveryList',
        example: {
          name: 'deliveries',
          summary: 'A retried delivery',
          value: {
            deliveries: [
              { time: '2031-04-01T09:35:05.000Z', changeId: 'c_0000000001', status: 200, durationMs: 84, outcome: 'delivered' },
              { time: '2031-04-01T09:35:00.000Z', changeId: 'c_0000000001', status: 503, durationMs: 61, outcome: 'retrying' },
            ],
          },
        },
      },
    },
    errors: { 400: invalidId, 404: notFound, 413: gatewayTooLarge },
    mockHeaders: {},
  },
  enableWebhookSubscription: {
    description: `Enables a subscription its receiver disabled by answering 410 Gone; it receives the changes committed from now on (replay the ones it missed). ${ownership}`,
    parameters: [subscriptionIdParameter],
    success: {
      description: 'Success: the subscription, enabled',
      body: { schema: 'WebhookSubscription', example: { name: 'enabled', summary: 'Enabled again', value: exampleView } },
    },
    errors: { 400: invalidId, 404: notFound, 413: gatewayTooLarge },
    mockHeaders: {},
  },
} satisfies Record<string, OperationDetails>;

const schedule = RETRY_DELAYS_SECONDS.map((seconds) =>
  seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${seconds / 60} min` : `${seconds / 3600} h`,
).join(', ');

/** The document's `webhooks`: what a subscribed URL receives. */
export function webhooksEntry(): Record<string, unknown> {
  const header = (description: string, schema: Record<string, unknown>, example: string) => ({
    description,
    required: true,
    schema,
    example,
  });
  return {
    specialEventChanged: {
      post: {
        operationId: 'specialEventChanged',
        summary: 'A special event changed',
        description:
          "Sent to each enabled subscription whose `types` include the change's type: one CloudEvents 1.0 change per request, signed as the " +
          '[Standard Webhooks](https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md) specification says ' +
          "(verify with its libraries, e.g. npm `standardwebhooks`). Redocly's museum example `publishNewEvent` corresponds to " +
          '`museum.special-event.created`; this one webhook also carries `museum.special-event.updated` and `museum.special-event.deleted` ' +
          '(a cancellation: `data.event` is null, `data.previous` the last state).\n\n' +
          `Answer 2xx within 10 s: delivered. Anything else, a redirect, or no answer is retried after ${schedule} ` +
          `(${MAX_DELIVERY_ATTEMPTS} attempts over more than 72 hours), then kept as a dead letter. \`410 Gone\` disables the subscription. ` +
          'Every attempt is signed anew (a new `webhook-timestamp`); repeats carry the same `webhook-id`: use it to drop duplicates. For one event, a later change is never sent before an earlier one was delivered or dead-lettered.',
        tags: ['Webhook subscriptions'],
        // The receiver authenticates the sender by the signature, not by credentials.
        security: [],
        parameters: [
          {
            name: 'webhook-id',
            in: 'header',
            ...header("The change's `id`, the same on every attempt", { type: 'string' }, 'c_0000000001'),
          },
          {
            name: 'webhook-timestamp',
            in: 'header',
            ...header("This attempt's time in Unix seconds", { type: 'string', pattern: '^[0-9]+$' }, '1932888900'),
          },
          {
            name: 'webhook-signature',
            in: 'header',
            ...header(
              'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, one per secret that signs now (two during a rotation)',
              { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
              'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
            ),
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/cloudevents+json; charset=utf-8': {
              schema: schemaRef('ChangeEvent'),
              examples: {
                created: {
                  summary: 'An event was created (publishNewEvent)',
                  value: {
                    specversion: '1.0',
                    id: 'c_0000000001',
                    source: CHANGE_SOURCE,
                    type: 'museum.special-event.created',
                    subject: exampleEvent.eventId,
                    time: exampleCreatedAt,
                    datacontenttype: 'application/json',
                    data: { eventId: exampleEvent.eventId, version: 1, event: exampleEvent, previous: null },
                  },
                },
              },
            },
          },
        },
        responses: {
          200: { description: 'Delivered (any 2xx)' },
          410: { description: 'Gone: the subscription is disabled' },
        },
      },
    },
  };
}
