// POST /special-events
import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { makeHandlerIdempotent } from '@aws-lambda-powertools/idempotency/middleware';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { eventsStore } from './shared/config.ts';
import { getDynamoDbClient, requiredEnv } from './shared/dynamodb-client.ts';
import { CreateEventRequest } from './shared/event-schema.ts';
import { etag, httpHandler, jsonResponse, validate, type HttpHandler } from './shared/http.ts';
import { metrics } from './shared/observability.ts';
import { HttpProblem } from './shared/problems.ts';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

const createSpecialEvent: HttpHandler = async (event) => {
  const input = validate(CreateEventRequest, event.body, 'request body');
  const { event: created, version } = await eventsStore().createEvent(input);
  metrics.addMetric('SpecialEventsCreated', 'Count', 1);
  return jsonResponse(201, created, {
    Location: `${event.requestContext.path.replace(/\/$/, '')}/${created.eventId}`,
    ETag: etag(version),
  });
};

function idempotencyKeyBounds(): MiddlewareObj<APIGatewayProxyEvent> {
  return {
    before: ({ event }) => {
      const key = event.headers['idempotency-key'];
      if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH)) {
        throw new HttpProblem('validation-error', `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`, {
          errors: [{ field: 'Idempotency-Key', message: `must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters` }],
        });
      }
    },
  };
}

// A retry with the same Idempotency-Key from the same user within 24 hours gets the first
// response again; the same key with a different body is a 422 problem. Requests without the
// header are not deduplicated. Keys are scoped to the authenticated user.
const idempotency = makeHandlerIdempotent({
  // The functions' own DynamoDB client, not one with the SDK defaults: without a request timeout a
  // hung idempotency-table call would last until the Lambda timeout (502) instead of ending as a
  // 503. Sharing it with the store also spares a cold start a second client and connection.
  persistenceStore: new DynamoDBPersistenceLayer({ tableName: requiredEnv('IDEMPOTENCY_TABLE_NAME'), awsSdkV3Client: getDynamoDbClient() }),
  config: new IdempotencyConfig({
    eventKeyJmesPath: 'headers."idempotency-key" && [requestContext.authorizer.principalId, headers."idempotency-key"]',
    payloadValidationJmesPath: 'body',
    expiresAfterSeconds: IDEMPOTENCY_WINDOW_SECONDS,
    throwOnNoIdempotencyKey: false,
  }),
});

export const handler = httpHandler(createSpecialEvent, idempotencyKeyBounds(), idempotency);
