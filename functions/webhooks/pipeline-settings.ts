// The webhook pipeline's settings, in one place: the CDK stack deploys them (lib/cdk/webhook-pipeline.ts)
// and the local run's event source mappings and SQS stand-in apply them (lib/local/webhook-pipeline.ts).
import { CHANGE_ITEM } from '../changes/change-event.ts';

/**
 * The stream event source mapping's filter (Lambda FilterCriteria, EventBridge pattern syntax):
 * only INSERTs of change items reach the consumer; subscriptions, attempts, events, users and
 * idempotency records are filtered out before any invocation.
 * https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html#filtering-ddb
 */
export const CHANGE_STREAM_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { Keys: { pk: { S: [{ prefix: CHANGE_ITEM.pkPrefix }] } } },
} as const;

export const WEBHOOK_PIPELINE = {
  stream: {
    /** Records per invocation: one Query of the subscriptions and a SendMessageBatch per 10 deliveries each. */
    batchSize: 100,
    /** Each failed batch is retried this often (then its metadata goes to the on-failure queue)... */
    maximumRetryAttempts: 10,
    /** ...and split in two on a function error, to find the record that fails. */
    bisectBatchOnFunctionError: true,
    /** Stream records live 24 h; a record older than this is past saving. */
    maximumRecordAgeSeconds: 6 * 3600,
  },
  queue: {
    /**
     * One message per invocation: no delivery waits on another's attempt (a dead receiver holds its
     * invocation for the 10 s attempt, and only its own). On a FIFO queue Lambda runs as many
     * invocations at once as there are message groups with a message ready, up to
     * maximumConcurrency (services-sqs-scaling.html); a group is a subscription and an event.
     */
    batchSize: 1,
    /**
     * ScalingConfig.MaximumConcurrency (2 to 1000): the deliveries' share of the account's 1,000
     * concurrent executions, which the API's handlers use too. Other subscriptions are delayed only
     * once this many deliveries are under way at once (docs/WEBHOOKS.md, "Isolation").
     */
    maximumConcurrency: 100,
    /** Six times the delivery function's timeout, as Lambda advises for SQS event sources (services-sqs-configure). */
    visibilityTimeoutSeconds: 360,
    /**
     * The redrive policy's receive count, SQS's maximum: a backstop for a message the function never
     * finishes. The function dead-letters a delivery itself after its last attempt; until then a
     * delivery's receives (17 for the whole schedule: 12 attempts and a hop per 12-hour wait) stay
     * far below it.
     */
    maxReceiveCount: 1000,
    /** SQS's maximum: 14 days, beyond the 77.6 h schedule. */
    retentionSeconds: 14 * 24 * 3600,
  },
} as const;

/** The queues' names (FIFO names end in .fifo). */
export const WEBHOOK_QUEUE_NAMES = {
  deliveries: 'museum-webhook-deliveries.fifo',
  deadLetters: 'museum-webhook-dead-letters.fifo',
  /** Where the stream mapping puts the metadata of records it gave up on (standard queue). */
  streamFailures: 'museum-webhook-stream-failures',
} as const;
