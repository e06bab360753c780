// The webhook pipeline of the local run, on stand-ins for what AWS runs it on: the KMS and SQS
// stand-ins (loopback endpoints the functions reach through the SDK), and two event source
// mappings that invoke the same bundles through the local Lambda runtime as Lambda's pollers do:
// - the stream mapping (stream-mapping.ts) reads DynamoDB Local's stream of the events table and
//   invokes the consumer with batches of the change records, retrying, bisecting and giving up as
//   Lambda does;
// - the queue mapping (queue-mapping.ts) receives batches from the delivery queue, invokes the
//   delivery function as many at once as Lambda would, and deletes the messages it did not report
//   failed (partial batch responses).
// A stop ends both: the stream mapping after the consumer's batch under way, the queue mapping
// after the deliveries under way (or with their messages made visible again).
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html
// https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
import { join } from 'node:path';
import { WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { WEBHOOK_PIPELINE, WEBHOOK_QUEUE_NAMES } from '../../functions/webhooks/pipeline-settings.ts';
import { retryScale } from '../../functions/webhooks/retry-schedule.ts';
import { ATTEMPT_TIMEOUT_MS } from '../../functions/webhooks/webhook-sender.ts';
import { LOCAL_REGION, localCredentials } from './dynamodb-local.ts';
import { LOCAL_KMS_KEY_ID, startKmsStandIn } from './kms-stand-in.ts';
import type { LocalLambda } from './lambda-runtime.ts';
import { privateDirectory } from './private-files.ts';
import { startQueueMapping, type QueueMapping } from './queue-mapping.ts';
import { serveSqs } from './sqs-api.ts';
import { LOCAL_ACCOUNT, LocalSqs } from './sqs-stand-in.ts';
import { StreamMapping } from './stream-mapping.ts';

export interface LocalWebhookPipelineOptions {
  dynamodbEndpoint: string;
  tableName: string;
  /** The local Lambda of the run (the gateway's too), which has the webhook functions (deployedFunctions()). */
  lambda: LocalLambda;
  /** Where the KMS key, the queues and the stream checkpoint persist; in memory without one. */
  dataDirectory?: string;
  /** MUSEUM_WEBHOOK_RETRY_SCALE: compresses the retry schedule (docs/WEBHOOKS.md). */
  retryScale?: string;
  /** The stand-ins' ports (MUSEUM_SQS_PORT, MUSEUM_KMS_PORT); 0 or unset: any free port. */
  ports?: { sqs?: number; kms?: number };
  log: (line: string) => void;
}

export interface LocalWebhookPipeline {
  /** The functions' environment: endpoints, queue URL, key id, the local URL rule. */
  environment: Record<string, string>;
  sqs: LocalSqs;
  /** Starts the two event source mappings (after `environment` is in process.env). */
  start(): void;
  /**
   * Stops the event source mappings (before the local Lambda ends its environments): deliveries
   * under way finish, or their messages are made visible again after STOP_WAIT_MS.
   */
  stopMappings(): Promise<void>;
  /** stopMappings(), then the SQS and KMS stand-ins. */
  close(): Promise<void>;
}

/** How long a stop lets deliveries under way finish: an attempt ends within ATTEMPT_TIMEOUT_MS, recording it takes less than a second more. */
const STOP_WAIT_MS = ATTEMPT_TIMEOUT_MS + 1_000;

/** The delivery queue, its dead-letter queue and the stream mapping's on-failure queue, as the stack defines them. */
function webhookQueues(directory: string | undefined): LocalSqs {
  const { queue } = WEBHOOK_PIPELINE;
  return new LocalSqs(
    [
      {
        name: WEBHOOK_QUEUE_NAMES.deliveries,
        visibilityTimeoutSeconds: queue.visibilityTimeoutSeconds,
        retentionSeconds: queue.retentionSeconds,
        redrive: { deadLetterQueue: WEBHOOK_QUEUE_NAMES.deadLetters, maxReceiveCount: queue.maxReceiveCount },
      },
      { name: WEBHOOK_QUEUE_NAMES.deadLetters, visibilityTimeoutSeconds: 30, retentionSeconds: queue.retentionSeconds },
      { name: WEBHOOK_QUEUE_NAMES.streamFailures, visibilityTimeoutSeconds: 30, retentionSeconds: queue.retentionSeconds },
    ],
    directory && join(directory, 'sqs.json'),
  );
}

/** The functions' environment: the stand-ins' endpoints, the queue URLs, the key id, the local URL rule. */
function functionEnvironment(sqs: LocalSqs, sqsUrl: string, kmsUrl: string, scale: string | undefined): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_SQS: sqsUrl,
    AWS_ENDPOINT_URL_KMS: kmsUrl,
    WEBHOOK_QUEUE_URL: sqs.queueUrl(sqsUrl, WEBHOOK_QUEUE_NAMES.deliveries),
    WEBHOOK_DEAD_LETTER_QUEUE_URL: sqs.queueUrl(sqsUrl, WEBHOOK_QUEUE_NAMES.deadLetters),
    WEBHOOK_SECRETS_KEY_ID: LOCAL_KMS_KEY_ID,
    WEBHOOK_ALLOW_LOOPBACK: '1',
    ...(scale ? { WEBHOOK_RETRY_SCALE: scale } : {}),
  };
}

/** The delivery queue's event source mapping, invoking the delivery function as the stack configures it. */
function startDeliveryMapping(sqs: LocalSqs, lambda: LocalLambda, log: (line: string) => void): QueueMapping {
  const { queue } = WEBHOOK_PIPELINE;
  return startQueueMapping({
    sqs,
    queueName: WEBHOOK_QUEUE_NAMES.deliveries,
    queueArn: `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${WEBHOOK_QUEUE_NAMES.deliveries}`,
    region: LOCAL_REGION,
    account: LOCAL_ACCOUNT,
    batchSize: queue.batchSize,
    maximumConcurrency: queue.maximumConcurrency,
    invoke: (event) => lambda.invoke<unknown>(WEBHOOK_FUNCTIONS.delivery.handler, event),
    stopWaitMs: STOP_WAIT_MS,
    log,
  });
}

export async function startLocalWebhookPipeline(options: LocalWebhookPipelineOptions): Promise<LocalWebhookPipeline> {
  const directory = options.dataDirectory ? join(options.dataDirectory, 'webhooks') : undefined;
  if (directory) privateDirectory(directory);
  // The stand-ins answer only the key the functions sign with (local-environment.ts handlerEnvironment).
  const { accessKeyId } = localCredentials(options.dynamodbEndpoint);
  const kms = await startKmsStandIn({
    ...(directory ? { keyFile: join(directory, 'kms-key') } : {}),
    accessKeyId,
    port: options.ports?.kms ?? 0,
  });
  const sqs = webhookQueues(directory);
  const sqsEndpoint = await serveSqs(sqs, { accessKeyId, port: options.ports?.sqs ?? 0 });
  const environment = functionEnvironment(sqs, sqsEndpoint.url, kms.url, options.retryScale);
  // Both mappings invoke the run's local Lambda, the gateway's too (one concurrency pool, as in one account).
  const streamMapping = new StreamMapping({
    dynamodbEndpoint: options.dynamodbEndpoint,
    tableName: options.tableName,
    invoke: (event) => options.lambda.invoke<unknown>(WEBHOOK_FUNCTIONS.consumer.handler, event),
    sqs,
    ...(directory ? { checkpointFile: join(directory, 'stream-checkpoint.json') } : {}),
    retryScale: retryScale(options.retryScale),
    log: options.log,
  });
  let queueMapping: QueueMapping | undefined;
  let mappingsStopped: Promise<void> | undefined;
  const stopMappings = () =>
    (mappingsStopped ??= (async () => {
      await Promise.all([streamMapping.stop(), queueMapping?.stop()]);
    })());

  return {
    environment,
    sqs,
    start() {
      streamMapping.start();
      queueMapping = startDeliveryMapping(sqs, options.lambda, options.log);
    },
    stopMappings,
    async close() {
      await stopMappings();
      await Promise.all([kms.close(), sqsEndpoint.close()]);
    },
  };
}
