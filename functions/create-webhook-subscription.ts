// POST /webhook-subscriptions
import { CHANGE_TYPES } from './changes/change-event.ts';
import { tableStore } from './config.ts';
import { HttpProblem } from './events/problems.ts';
import { httpHandler, jsonRequestBody, jsonResponse, type HttpHandler } from './http/http.ts';
import { noQueryParameters, validate } from './http/request-validation.ts';
import { metrics } from './observability.ts';
import { callerOf } from './webhooks/webhook-access.ts';
import { CreateSubscriptionRequest, type CreatedSubscription } from './webhooks/webhook-schema.ts';
import { encryptSecret, generateSecret } from './webhooks/webhook-secrets.ts';
import { checkSubscriptionUrl, WebhookUrlRefused } from './webhooks/webhook-url.ts';
import { newSubscriptionId, SubscriptionsStore } from './webhooks/subscriptions-store.ts';

const createWebhookSubscription: HttpHandler = async (event, _context, { signal }) => {
  noQueryParameters(event);
  const caller = callerOf(event);
  const input = validate(CreateSubscriptionRequest, event.body, 'request body');
  try {
    await checkSubscriptionUrl(input.url);
  } catch (error) {
    if (!(error instanceof WebhookUrlRefused)) throw error;
    throw new HttpProblem('webhook-url-refused', `The webhook URL is refused: it ${error.message}`, {
      errors: [{ field: 'url', message: error.message }],
    });
  }
  const id = newSubscriptionId();
  const secret = generateSecret();
  const createdAt = new Date().toISOString();
  const types = input.types ?? [...CHANGE_TYPES];
  await tableStore(SubscriptionsStore, signal).create({
    id,
    owner: caller.username,
    url: input.url,
    types,
    enabled: true,
    createdAt,
    secrets: [{ ciphertext: await encryptSecret(secret, id, signal) }],
  });
  metrics.addMetric('WebhookSubscriptionsCreated', 'Count', 1);
  const created: CreatedSubscription = { id, url: input.url, types, secret, createdAt };
  return jsonResponse(201, created, { Location: `${event.requestContext.path.replace(/\/$/, '')}/${id}` });
};

export const handler = httpHandler(createWebhookSubscription, jsonRequestBody());
