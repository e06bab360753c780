// The webhook pipeline of the local run, on stand-ins for what AWS runs it on: the KMS and SQS
// stand-ins (loopback endpoints the functions reach through the SDK), and two event source
// mappings that invoke the same bundles through the local Lambda runtime as Lambda's pollers do:
// - the stream mapping reads DynamoDB Local's stream of the events table (ListStreams,
//   DescribeStream, GetShardIterator from TRIM_HORIZON or the stored sequence number, GetRecords),
//   keeps the records CHANGE_STREAM_FILTER matches, invokes the consumer with batches of them and,
//   on a reported failure (ReportBatchItemFailures), retries from the lowest failed record; a
//   function error halves the batch (BisectBatchOnFunctionError, not counted as a retry); after
//   maximumRetryAttempts the failed records are discarded, their metadata goes to the on-failure
//   queue and the mapping moves past them.
// https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html
// - the queue mapping (queue-mapping.ts) receives batches from the delivery queue, invokes the
//   delivery function as many at once as Lambda would, and deletes the messages it did not report
//   failed (partial batch responses).
// A stop ends both: the stream mapping after the consumer's batch under way, the queue mapping
// after the deliveries under way (or with their messages made visible again).
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html
// https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
// https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { CHANGE_STREAM_FILTER, WEBHOOK_PIPELINE, WEBHOOK_QUEUE_NAMES } from '../../functions/webhooks/pipeline-settings.ts';
import { retryScale } from '../../functions/webhooks/retry-schedule.ts';
import { ATTEMPT_TIMEOUT_MS } from '../../functions/webhooks/webhook-sender.ts';
import { LOCAL_REGION, localCredentials } from './dynamodb-local.ts';
import { LOCAL_KMS_KEY_ID, startKmsStandIn } from './kms-stand-in.ts';
import type { LocalLambda } from './lambda-runtime.ts';
import { privateDirectory, writePrivateFile } from './private-files.ts';
import { startQueueMapping, type QueueMapping } from './queue-mapping.ts';
import { serveSqs } from './sqs-api.ts';
import { firstFailedRecord, lambdaRecord, matchesFilter } from './stream-records.ts';
import { LOCAL_ACCOUNT, LocalSqs } from './sqs-stand-in.ts';

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

/** Lambda polls a stream shard about four times a second (with-ddb.html, "Polling and batching streams"). */
const STREAM_POLL_MS = 250;
/** How long a stop lets deliveries under way finish: an attempt ends within ATTEMPT_TIMEOUT_MS, recording it takes less than a second more. */
const STOP_WAIT_MS = ATTEMPT_TIMEOUT_MS + 1_000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((done) => {
    const finish = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      done();
    };
    const timer = setTimeout(finish, ms);
    signal.addEventListener('abort', finish, { once: true });
  });

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
  const { queue } = WEBHOOK_PIPELINE;
  const sqs = new LocalSqs(
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
  const sqsEndpoint = await serveSqs(sqs, { accessKeyId, port: options.ports?.sqs ?? 0 });
  const environment: Record<string, string> = {
    AWS_ENDPOINT_URL_SQS: sqsEndpoint.url,
    AWS_ENDPOINT_URL_KMS: kms.url,
    WEBHOOK_QUEUE_URL: sqs.queueUrl(sqsEndpoint.url, WEBHOOK_QUEUE_NAMES.deliveries),
    WEBHOOK_DEAD_LETTER_QUEUE_URL: sqs.queueUrl(sqsEndpoint.url, WEBHOOK_QUEUE_NAMES.deadLetters),
    WEBHOOK_SECRETS_KEY_ID: LOCAL_KMS_KEY_ID,
    WEBHOOK_ALLOW_LOOPBACK: '1',
    ...(options.retryScale ? { WEBHOOK_RETRY_SCALE: options.retryScale } : {}),
  };
  const scale = retryScale(options.retryScale);
  const stopping = new AbortController();
  /** A function, not the flag itself: the checks narrow a property read to `false` after the first. */
  const stopped = () => stopping.signal.aborted;
  // The account's functions, shared with the gateway (one concurrency pool, as in one account).
  const invoker = (name: string) => ({ invoke: <R>(event: unknown) => options.lambda.invoke<R>(name, event) });
  const consumer = invoker(WEBHOOK_FUNCTIONS.consumer.handler);
  const delivery = invoker(WEBHOOK_FUNCTIONS.delivery.handler);
  const loops: Promise<void>[] = [];

  const checkpointFile = directory && join(directory, 'stream-checkpoint.json');
  const checkpoints: Record<string, string> =
    checkpointFile && existsSync(checkpointFile) ? (JSON.parse(readFileSync(checkpointFile, 'utf8')) as Record<string, string>) : {};
  const saveCheckpoint = (shard: string, sequenceNumber: string) => {
    checkpoints[shard] = sequenceNumber;
    if (checkpointFile) writePrivateFile(checkpointFile, JSON.stringify(checkpoints));
  };

  async function streamMapping(): Promise<void> {
    const streams = new DynamoDBStreamsClient({
      endpoint: options.dynamodbEndpoint,
      region: LOCAL_REGION,
      credentials: localCredentials(options.dynamodbEndpoint),
    });
    const { stream } = WEBHOOK_PIPELINE;
    let announced = false;
    while (!stopped()) {
      try {
        const listed = await streams.send(new ListStreamsCommand({ TableName: options.tableName }));
        const streamArn = listed.Streams?.at(-1)?.StreamArn;
        if (!streamArn) {
          if (!announced) options.log(`webhooks: table ${options.tableName} has no stream yet; changes are delivered once it has one`);
          announced = true;
          await sleep(1000, stopping.signal);
          continue;
        }
        const described = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
        for (const shard of described.StreamDescription?.Shards ?? []) {
          const shardKey = `${streamArn}/${shard.ShardId ?? ''}`;
          const after = checkpoints[shardKey];
          const iterator = await streams.send(
            new GetShardIteratorCommand({
              StreamArn: streamArn,
              ShardId: shard.ShardId,
              ...(after ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after } : { ShardIteratorType: 'TRIM_HORIZON' }),
            }),
          );
          let next = iterator.ShardIterator;
          while (next && !stopped()) {
            const page = await streams.send(new GetRecordsCommand({ ShardIterator: next, Limit: stream.batchSize }));
            next = page.NextShardIterator;
            const records = page.Records ?? [];
            if (records.length === 0) {
              await sleep(STREAM_POLL_MS, stopping.signal);
              continue;
            }
            const last = records.at(-1)?.dynamodb?.SequenceNumber;
            const wanted = records.filter((record) => matchesFilter(CHANGE_STREAM_FILTER, record));
            const done = await deliverToConsumer(wanted, streamArn, shardKey, shard.ShardId ?? '');
            if (!done) break; // stopping
            if (last) saveCheckpoint(shardKey, last);
          }
          if (next) break; // an open shard is read until stop; closed ones are done
        }
      } catch (error) {
        if (stopped()) return;
        options.log(`webhooks: reading the stream failed (${(error as Error).name}: ${(error as Error).message}); retrying`);
        await sleep(1000, stopping.signal);
      }
    }
  }

  /** Invokes the consumer until every record is handled or given up on; false if the run stops first. */
  async function deliverToConsumer(records: StreamRecord[], streamArn: string, shardKey: string, shardId: string): Promise<boolean> {
    const { stream } = WEBHOOK_PIPELINE;
    /** The setting, widened from its literal type: the mapping follows whatever it says. */
    const bisects = stream.bisectBatchOnFunctionError as boolean;
    let pending = records;
    let limit = pending.length;
    let retries = 0;
    while (pending.length > 0) {
      if (stopped()) return false;
      const batch = pending.slice(0, limit);
      let failedAt: number | undefined;
      let functionError = false;
      try {
        const answer = await consumer.invoke<unknown>({ Records: batch.map((record) => lambdaRecord(record, streamArn)) });
        failedAt = firstFailedRecord(batch, answer);
      } catch (error) {
        options.log(`webhooks: the consumer failed (${(error as Error).message})`);
        failedAt = 0;
        functionError = true;
      }
      if (failedAt === undefined) {
        const handled = batch.at(-1)?.dynamodb?.SequenceNumber;
        if (handled) saveCheckpoint(shardKey, handled);
        pending = pending.slice(batch.length);
        limit = pending.length;
        retries = 0;
        continue;
      }
      if (failedAt > 0) {
        const handled = batch[failedAt - 1]?.dynamodb?.SequenceNumber;
        if (handled) saveCheckpoint(shardKey, handled);
      }
      pending = pending.slice(failedAt);
      const failed = batch.slice(failedAt);
      // BisectBatchOnFunctionError: a function error halves the batch, and "splitting batches
      // doesn't count towards the retry quota" (services-dynamodb-errors.html); a batch of one
      // cannot split, so its failures count. A reported failure retries from the record it names.
      if (functionError && bisects && failed.length > 1) {
        limit = Math.ceil(failed.length / 2);
        continue;
      }
      limit = failed.length;
      if (retries >= stream.maximumRetryAttempts) {
        giveUp(failed, { streamArn, shardId, invocations: retries + 1, functionError });
        pending = pending.slice(failed.length);
        limit = pending.length;
        retries = 0;
        continue;
      }
      retries++;
      // Lambda retries with a backoff it does not document: 1 s doubling to 30 s here, compressed
      // like the delivery retries by MUSEUM_WEBHOOK_RETRY_SCALE.
      await sleep(Math.min(1000 * 2 ** (retries - 1), 30_000) * scale, stopping.signal);
    }
    return true;
  }

  /**
   * Discards the records of a batch that failed every retry, and sends its metadata (not the
   * records) to the on-failure destination as the documented invocation record
   * (services-dynamodb-errors.html, "Example invocation record"); the mapping goes on past it.
   */
  function giveUp(
    failed: StreamRecord[],
    context: { streamArn: string; shardId: string; invocations: number; functionError: boolean },
  ): void {
    const first = failed[0]?.dynamodb;
    const last = failed.at(-1)?.dynamodb;
    const arrival = (record: typeof first) =>
      record?.ApproximateCreationDateTime?.toISOString().replace(/\.\d{3}Z$/, 'Z') ?? new Date().toISOString();
    const record = {
      requestContext: {
        requestId: randomUUID(),
        functionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${WEBHOOK_FUNCTIONS.consumer.handler}`,
        condition: 'RetryAttemptsExhausted',
        approximateInvokeCount: context.invocations,
      },
      responseContext: {
        statusCode: 200,
        executedVersion: '$LATEST',
        ...(context.functionError ? { functionError: 'Unhandled' } : {}),
      },
      version: '1.0',
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId: context.shardId,
        startSequenceNumber: first?.SequenceNumber,
        endSequenceNumber: last?.SequenceNumber,
        approximateArrivalOfFirstRecord: arrival(first),
        approximateArrivalOfLastRecord: arrival(last),
        batchSize: failed.length,
        streamArn: context.streamArn,
      },
    };
    sqs.send(WEBHOOK_QUEUE_NAMES.streamFailures, { body: JSON.stringify(record) });
    options.log(
      `webhooks: gave up on ${failed.length} change record(s) of the stream (sequence numbers ${first?.SequenceNumber} to ` +
        `${last?.SequenceNumber}) after ${context.invocations} invocations; their metadata is in the ` +
        `${WEBHOOK_QUEUE_NAMES.streamFailures} queue (docs/WEBHOOKS.md, "When the stream mapping gives up")`,
    );
  }

  let queueMapping: QueueMapping | undefined;
  let mappingsStopped: Promise<void> | undefined;
  const stopMappings = () =>
    (mappingsStopped ??= (async () => {
      stopping.abort();
      await Promise.all([Promise.allSettled(loops), queueMapping?.stop()]);
    })());

  return {
    environment,
    sqs,
    start() {
      loops.push(streamMapping());
      queueMapping = startQueueMapping({
        sqs,
        queueName: WEBHOOK_QUEUE_NAMES.deliveries,
        queueArn: `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${WEBHOOK_QUEUE_NAMES.deliveries}`,
        region: LOCAL_REGION,
        account: LOCAL_ACCOUNT,
        batchSize: queue.batchSize,
        maximumConcurrency: queue.maximumConcurrency,
        invoke: (event) => delivery.invoke<unknown>(event),
        stopWaitMs: STOP_WAIT_MS,
        log: options.log,
      });
    },
    stopMappings,
    async close() {
      await stopMappings();
      await Promise.all([kms.close(), sqsEndpoint.close()]);
    },
  };
}
