// The functions the stack deploys that no route names: the authorizer (its identity source,
// cache TTL and grants) and the webhook pipeline's consumer and delivery functions (their grants).
// The routes' functions are the route table's, functions/routes.ts; the build, the CDK stack and
// the local run read both lists.
import type { DataAccess } from './routes.ts';

/** The authorizer is bundled and deployed like the handlers but is not a route. */
export const AUTHORIZER_HANDLER = 'authorizer';
/**
 * The authorizer's identity source and API Gateway's result cache TTL, as the stack deploys them
 * (lib/cdk/special-events-api.ts) and the local gateway applies them (lib/local/proxy-event.ts,
 * authorizer-stand-in.ts). The cache is keyed by the identity source; no header: 401 without
 * calling the authorizer
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-use-lambda-authorizer.html).
 * The TTL is a default: the stage's context `authorizerCacheTtlSeconds` (deployed) and
 * AUTHORIZER_CACHE_TTL_SECONDS (local) set another, 0 to 3600.
 */
export const AUTHORIZER_IDENTITY = { header: 'Authorization', defaultCacheTtlSeconds: 300 } as const;
/** The authorizer's access: GetItem of a user's own item (USER#<name>) and the credential keys' secret, nothing else. */
export const AUTHORIZER_GRANTS: DataAccess = {
  events: { actions: ['dynamodb:GetItem'], partitions: 'users' },
  credentialKeys: ['secretsmanager:GetSecretValue'],
};

/**
 * The webhook pipeline's functions, which no route calls: the stream consumer (a DynamoDB Streams
 * event source mapping invokes it with the change items' INSERT records) fans each change out to
 * the delivery queue; the delivery function (an SQS event source mapping) POSTs it.
 */
export const WEBHOOK_FUNCTIONS = {
  consumer: {
    handler: 'webhook-change-consumer',
    // Query of the WEBHOOKS partition (the subscriptions); SendMessageBatch to the delivery queue.
    // Reading the stream is granted with its event source mapping (lib/cdk/webhook-pipeline.ts).
    grants: { events: { actions: ['dynamodb:Query'], partitions: 'webhooks' }, deliveryQueue: ['sqs:SendMessage'] },
  },
  delivery: {
    handler: 'webhook-delivery',
    // GetItem of the subscription, UpdateItem to disable it on a 410, PutItem of the attempt;
    // Decrypt of its secrets; ChangeMessageVisibility for the retry schedule.
    grants: {
      events: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'], partitions: 'webhooks' },
      secretsKey: ['kms:Decrypt'],
      deliveryQueue: ['sqs:ChangeMessageVisibility'],
    },
  },
} as const satisfies Record<string, { handler: string; grants: DataAccess }>;
