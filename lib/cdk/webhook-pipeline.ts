// The webhook pipeline on AWS's own services (docs/DEPLOY.md, "Webhooks"): the customer managed
// KMS key of the signing secrets, the FIFO delivery queue with its dead-letter queue, the stream
// event source mapping (change items' INSERTs -> the consumer) with its on-failure queue, the
// queue's event source mapping (-> the delivery function), and the alarms on dead letters, on the
// age of the oldest undelivered change and on the stream's iterator age (where the stage has
// monitoring, config.monitoring: production, and previews that ask for it). The settings are
// functions/webhooks/pipeline-settings.ts, which the local run applies too.
import { CfnDeletionPolicy, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CHANGE_STREAM_FILTER, WEBHOOK_PIPELINE } from '../../functions/webhooks/pipeline-settings.ts';
import type { StageConfig } from './stage-config.ts';

/** Why the stream mapping has an UpdateReplacePolicy and no DeletionPolicy (cfn-lint W3011 asks for both). */
export const RETAINED_ON_REPLACEMENT_ONLY =
  "Retained on replacement only: an attach replaces the mapping, and the old one must go on draining the old table's stream " +
  '(docs/DEPLOY.md, "Webhooks through an attach"); deleting the stack deletes the function it invokes, so the mapping goes too.';

/** The statistic every pipeline alarm watches. */
const FIVE_MINUTE_MAXIMUM = { period: Duration.minutes(5), statistic: 'Maximum' };

/** The queue and key: made before the functions, whose roles and environment name them. */
export class WebhookResources extends Construct {
  readonly key: kms.Key;
  readonly queue: sqs.Queue;
  readonly deadLetters: sqs.Queue;
  readonly streamFailures: sqs.Queue;

  constructor(scope: Construct, id: string, config: StageConfig) {
    super(scope, id);
    const removalPolicy = config.isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.key = new kms.Key(this, 'SecretsKey', {
      description: "Encrypts the webhook subscriptions' signing secrets",
      enableKeyRotation: true,
      removalPolicy,
    });
    const { queue } = WEBHOOK_PIPELINE;
    const retentionPeriod = Duration.seconds(queue.retentionSeconds);
    const common = { retentionPeriod, enforceSSL: true, encryption: sqs.QueueEncryption.SQS_MANAGED };
    this.deadLetters = new sqs.Queue(this, 'DeadLetters', { ...common, fifo: true });
    this.queue = new sqs.Queue(this, 'Deliveries', {
      ...common,
      fifo: true,
      visibilityTimeout: Duration.seconds(queue.visibilityTimeoutSeconds),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: queue.maxReceiveCount },
    });
    this.streamFailures = new sqs.Queue(this, 'StreamFailures', common);
    for (const deadLetterQueue of [this.deadLetters, this.streamFailures]) {
      Validations.of(deadLetterQueue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason: 'It is a dead-letter queue itself (an operator redrives it: docs/DEPLOY.md, "Webhooks").',
      });
    }
  }
}

export interface WebhookPipelineProps {
  config: StageConfig;
  resources: WebhookResources;
  table: ITableV2;
  /** Every events-table stream of the stage (MuseumTables.eventsStreams): what the consumer may read. */
  streams: string;
  /** The functions' `live` aliases: the mappings invoke the alias, so a release reaches them as it reaches the API's. */
  consumer: lambda.Alias;
  delivery: lambda.Alias;
}

export class WebhookPipeline extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: WebhookPipelineProps) {
    super(scope, id);
    const { config, resources, table, consumer, delivery } = props;
    const { stream, queue } = WEBHOOK_PIPELINE;
    // The stack's own events table has its stream; an attached one names it (context
    // eventsTableStreamArn, which readStageConfig requires with eventsTableName).
    const streamArn = table.tableStreamArn;
    if (!streamArn)
      throw new Error('The events table has no stream ARN: the webhook consumer would read no changes (docs/DEPLOY.md, "Restore")');
    // Attaching another table changes EventSourceArn, which replaces the mapping: CloudFormation
    // creates the new one first and deletes the old one in its cleanup phase. Retained on
    // replacement, the old mapping instead keeps delivering what the old table's stream still
    // holds (the canary's and in-flight writes), with the consumer's grant covering every stream
    // of the stage; the operator deletes it once drained (docs/DEPLOY.md, "Restore").
    const changeStream = new lambda.EventSourceMapping(this, 'ChangeStream', {
      target: consumer,
      eventSourceArn: streamArn,
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: stream.batchSize,
      bisectBatchOnError: stream.bisectBatchOnFunctionError,
      retryAttempts: stream.maximumRetryAttempts,
      maxRecordAge: Duration.seconds(stream.maximumRecordAgeSeconds),
      reportBatchItemFailures: true,
      onFailure: new SqsDlq(resources.streamFailures),
      filters: [lambda.FilterCriteria.filter(CHANGE_STREAM_FILTER)],
    });
    (changeStream.node.defaultChild as lambda.CfnEventSourceMapping).cfnOptions.updateReplacePolicy = CfnDeletionPolicy.RETAIN;
    Validations.of(changeStream).acknowledge({ id: 'CloudFormation-Validate::W3011', reason: RETAINED_ON_REPLACEMENT_ONLY });
    consumer.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        resources: [props.streams],
      }),
    );
    consumer.addToRolePolicy(new iam.PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }));
    Validations.of(consumer).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'dynamodb:ListStreams supports no resource-level permissions; the event source mapping calls it.',
    });
    // One message per invocation, as many at once as there are message groups ready, up to
    // maximumConcurrency (docs/WEBHOOKS.md, "Isolation"; services-sqs-scaling.html).
    new lambda.EventSourceMapping(this, 'DeliveryQueue', {
      target: delivery,
      eventSourceArn: resources.queue.queueArn,
      batchSize: queue.batchSize,
      maxConcurrency: queue.maximumConcurrency,
      reportBatchItemFailures: true,
    });
    resources.queue.grantConsumeMessages(delivery);
    // The function dead-letters a delivery itself after its last attempt (WEBHOOK_DEAD_LETTER_QUEUE_URL).
    resources.deadLetters.grantSendMessages(delivery);
    if (!config.monitoring) return;
    const anyMessage = cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD;
    this.alarm(
      'StreamIteratorAge',
      'The change stream is read more than 10 minutes behind: changes wait before delivery (runbook: docs/DEPLOY.md, "Webhooks")',
      consumer.lambda.metric('IteratorAge', FIVE_MINUTE_MAXIMUM),
      10 * 60_000,
    );
    this.alarm(
      'DeadLetters',
      'A webhook delivery was given up after every retry (runbook: docs/DEPLOY.md, "Webhooks": inspect, then redrive)',
      resources.deadLetters.metricApproximateNumberOfMessagesVisible(FIVE_MINUTE_MAXIMUM),
      0,
      anyMessage,
    );
    this.alarm(
      'StreamFailures',
      'The stream mapping gave up on change records: they were not queued for delivery (replay them)',
      resources.streamFailures.metricApproximateNumberOfMessagesVisible(FIVE_MINUTE_MAXIMUM),
      0,
      anyMessage,
    );
    this.alarm(
      'OldestUndelivered',
      'A change has waited more than 6 hours for delivery (a receiver is down: see GET .../deliveries)',
      resources.queue.metricApproximateAgeOfOldestMessage(FIVE_MINUTE_MAXIMUM),
      6 * 3600,
    );
  }

  /** One period over the threshold alarms; no data (nothing to deliver, a quiet night) is not a failure. */
  private alarm(
    id: string,
    alarmDescription: string,
    metric: cloudwatch.IMetric,
    threshold: number,
    comparisonOperator = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
  ) {
    this.alarms.push(
      new cloudwatch.Alarm(this, id, {
        alarmDescription,
        metric,
        threshold,
        comparisonOperator,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
}
