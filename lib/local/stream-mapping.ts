// The local run's DynamoDB stream event source mapping for the webhook consumer (Lambda's poller,
// which is AWS's own): it reads DynamoDB Local's stream of the events table (ListStreams,
// DescribeStream, GetShardIterator from TRIM_HORIZON or the stored sequence number, GetRecords),
// keeps the records CHANGE_STREAM_FILTER matches, invokes the consumer with batches of them and,
// on a reported failure (ReportBatchItemFailures), retries from the lowest failed record; a
// function error halves the batch (BisectBatchOnFunctionError, not counted as a retry); after
// maximumRetryAttempts the failed records are discarded, their metadata goes to the on-failure
// queue and the mapping moves past them. A stop ends it after the consumer's batch under way.
// https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html
// https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
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
import { LOCAL_REGION, localCredentials } from './dynamodb-local.ts';
import { writePrivateFile } from './private-files.ts';
import { firstFailedRecord, lambdaRecord, matchesFilter } from './stream-records.ts';
import { LOCAL_ACCOUNT, type LocalSqs } from './sqs-stand-in.ts';

export interface StreamMappingOptions {
  dynamodbEndpoint: string;
  tableName: string;
  /** Invokes the consumer function (the run's local Lambda). */
  invoke: (event: unknown) => Promise<unknown>;
  /** The SQS stand-in whose on-failure queue (WEBHOOK_QUEUE_NAMES.streamFailures) gets what the mapping gives up on. */
  sqs: LocalSqs;
  /** Where each shard's last handled sequence number persists; in memory without one. */
  checkpointFile?: string;
  /** The retry schedule's compression (retryScale(MUSEUM_WEBHOOK_RETRY_SCALE)), applied to the retries' backoff too. */
  retryScale: number;
  log: (line: string) => void;
}

/** Lambda polls a stream shard about four times a second (with-ddb.html, "Polling and batching streams"). */
const STREAM_POLL_MS = 250;

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

export class StreamMapping {
  private readonly options: StreamMappingOptions;
  private readonly stopping = new AbortController();
  private readonly checkpoints: Record<string, string>;
  private loop: Promise<void> | undefined;

  constructor(options: StreamMappingOptions) {
    this.options = options;
    const { checkpointFile } = options;
    this.checkpoints =
      checkpointFile && existsSync(checkpointFile) ? (JSON.parse(readFileSync(checkpointFile, 'utf8')) as Record<string, string>) : {};
  }

  /** Starts reading the stream. */
  start(): void {
    this.loop = this.run();
  }

  /** Stops reading: resolves once the consumer's batch under way, if any, is over. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled(this.loop ? [this.loop] : []);
  }

  /** A function, not the flag itself: the checks narrow a property read to `false` after the first. */
  private stopped(): boolean {
    return this.stopping.signal.aborted;
  }

  private saveCheckpoint(shard: string, sequenceNumber: string): void {
    this.checkpoints[shard] = sequenceNumber;
    if (this.options.checkpointFile) writePrivateFile(this.options.checkpointFile, JSON.stringify(this.checkpoints));
  }

  /** Reads the table's latest stream until stop, waiting for one while the table has none; a failed read is retried. */
  private async run(): Promise<void> {
    const { dynamodbEndpoint, tableName, log } = this.options;
    const streams = new DynamoDBStreamsClient({
      endpoint: dynamodbEndpoint,
      region: LOCAL_REGION,
      credentials: localCredentials(dynamodbEndpoint),
    });
    let announced = false;
    while (!this.stopped()) {
      try {
        const listed = await streams.send(new ListStreamsCommand({ TableName: tableName }));
        const streamArn = listed.Streams?.at(-1)?.StreamArn;
        if (!streamArn) {
          if (!announced) log(`webhooks: table ${tableName} has no stream yet; changes are delivered once it has one`);
          announced = true;
          await sleep(1000, this.stopping.signal);
          continue;
        }
        const described = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
        for (const shard of described.StreamDescription?.Shards ?? []) {
          const open = await this.readShard(streams, streamArn, shard.ShardId);
          if (open) break; // an open shard is read until stop; closed ones are done
        }
      } catch (error) {
        if (this.stopped()) return;
        log(`webhooks: reading the stream failed (${(error as Error).name}: ${(error as Error).message}); retrying`);
        await sleep(1000, this.stopping.signal);
      }
    }
  }

  /** Reads a shard from its checkpoint, batch after batch, until it ends or the run stops; true if it is still open. */
  private async readShard(streams: DynamoDBStreamsClient, streamArn: string, shardId: string | undefined): Promise<boolean> {
    const shardKey = `${streamArn}/${shardId ?? ''}`;
    const after = this.checkpoints[shardKey];
    const iterator = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ...(after ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after } : { ShardIteratorType: 'TRIM_HORIZON' }),
      }),
    );
    let next = iterator.ShardIterator;
    while (next && !this.stopped()) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: next, Limit: WEBHOOK_PIPELINE.stream.batchSize }));
      next = page.NextShardIterator;
      const records = page.Records ?? [];
      if (records.length === 0) {
        await sleep(STREAM_POLL_MS, this.stopping.signal);
        continue;
      }
      const last = records.at(-1)?.dynamodb?.SequenceNumber;
      const wanted = records.filter((record) => matchesFilter(CHANGE_STREAM_FILTER, record));
      const done = await this.deliverToConsumer(wanted, streamArn, shardKey, shardId ?? '');
      if (!done) break; // stopping
      if (last) this.saveCheckpoint(shardKey, last);
    }
    return Boolean(next);
  }

  /** Invokes the consumer until every record is handled or given up on; false if the run stops first. */
  private async deliverToConsumer(records: StreamRecord[], streamArn: string, shardKey: string, shardId: string): Promise<boolean> {
    const { stream } = WEBHOOK_PIPELINE;
    /** The setting, widened from its literal type: the mapping follows whatever it says. */
    const bisects = stream.bisectBatchOnFunctionError as boolean;
    let pending = records;
    let limit = pending.length;
    let retries = 0;
    while (pending.length > 0) {
      if (this.stopped()) return false;
      const batch = pending.slice(0, limit);
      let failedAt: number | undefined;
      let functionError = false;
      try {
        const answer = await this.options.invoke({ Records: batch.map((record) => lambdaRecord(record, streamArn)) });
        failedAt = firstFailedRecord(batch, answer);
      } catch (error) {
        this.options.log(`webhooks: the consumer failed (${(error as Error).message})`);
        failedAt = 0;
        functionError = true;
      }
      if (failedAt === undefined) {
        const handled = batch.at(-1)?.dynamodb?.SequenceNumber;
        if (handled) this.saveCheckpoint(shardKey, handled);
        pending = pending.slice(batch.length);
        limit = pending.length;
        retries = 0;
        continue;
      }
      if (failedAt > 0) {
        const handled = batch[failedAt - 1]?.dynamodb?.SequenceNumber;
        if (handled) this.saveCheckpoint(shardKey, handled);
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
        this.giveUp(failed, { streamArn, shardId, invocations: retries + 1, functionError });
        pending = pending.slice(failed.length);
        limit = pending.length;
        retries = 0;
        continue;
      }
      retries++;
      // Lambda retries with a backoff it does not document: 1 s doubling to 30 s here, compressed
      // like the delivery retries by MUSEUM_WEBHOOK_RETRY_SCALE.
      await sleep(Math.min(1000 * 2 ** (retries - 1), 30_000) * this.options.retryScale, this.stopping.signal);
    }
    return true;
  }

  /**
   * Discards the records of a batch that failed every retry, and sends its metadata (not the
   * records) to the on-failure destination as the documented invocation record
   * (services-dynamodb-errors.html, "Example invocation record"); the mapping goes on past it.
   */
  private giveUp(
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
    this.options.sqs.send(WEBHOOK_QUEUE_NAMES.streamFailures, { body: JSON.stringify(record) });
    this.options.log(
      `webhooks: gave up on ${failed.length} change record(s) of the stream (sequence numbers ${first?.SequenceNumber} to ` +
        `${last?.SequenceNumber}) after ${context.invocations} invocations; their metadata is in the ` +
        `${WEBHOOK_QUEUE_NAMES.streamFailures} queue (docs/WEBHOOKS.md, "When the stream mapping gives up")`,
    );
  }
}
