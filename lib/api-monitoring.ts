// Alarms to an SNS topic and one dashboard: is the API failing (5xx rate), slow (p99), unable to
// authenticate (authorizer failures), are functions crashing or throttled, is DynamoDB throttling.
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, type MuseumFunctions } from './museum-functions.ts';
import type { MuseumTables } from './museum-tables.ts';
import type { SpecialEventsApi } from './special-events-api.ts';
import type { StageConfig } from './stage-config.ts';

const PERIOD = Duration.minutes(5);

/** Share of requests answered 5xx in five minutes that raises the alarm. */
export const SERVER_ERROR_RATE_THRESHOLD = 0.05;

/** The DynamoDB operations the functions call, whose throttling the alarms watch. */
const DYNAMODB_OPERATIONS = {
  events: ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem', 'TransactWriteItems'],
  idempotency: ['GetItem', 'TransactWriteItems'],
};

export interface ApiMonitoringProps {
  config: StageConfig;
  api: SpecialEventsApi;
  functions: MuseumFunctions;
  tables: MuseumTables;
}

export class ApiMonitoring extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ApiMonitoringProps) {
    super(scope, id);
    const { config, api, functions, tables } = props;
    const stage = api.api.deploymentStage;

    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: `Museum API alarms (${config.stage})`, enforceSSL: true });
    if (config.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(config.alarmEmail));

    const serverErrorRate = stage.metricServerError({ statistic: 'Average', period: PERIOD, label: '5xx rate' });
    this.alarm('ServerErrorRate', serverErrorRate, {
      threshold: SERVER_ERROR_RATE_THRESHOLD,
      evaluationPeriods: 1,
      alarmDescription: `More than ${SERVER_ERROR_RATE_THRESHOLD * 100}% of requests answered 5xx in 5 minutes`,
    });
    const p99Latency = stage.metricLatency({ statistic: 'p99', period: PERIOD, label: 'p99 latency' });
    this.alarm('P99Latency', p99Latency, {
      threshold: config.latencyP99AlarmMs,
      evaluationPeriods: 3,
      alarmDescription: `p99 latency above ${config.latencyP99AlarmMs} ms for 15 minutes`,
    });

    // The authorizer's own Errors metric counts every rejected password (throwing 'Unauthorized'
    // is how a Lambda authorizer says 401), so failures are counted from the access log instead:
    // API Gateway answers AUTHORIZER_FAILURE when the authorizer crashed, timed out or was throttled.
    const authorizerFailures = new logs.MetricFilter(this, 'AuthorizerFailuresFilter', {
      logGroup: api.accessLogs,
      filterPattern: logs.FilterPattern.any(
        logs.FilterPattern.stringValue('$.errorType', '=', 'AUTHORIZER_FAILURE'),
        logs.FilterPattern.stringValue('$.errorType', '=', 'AUTHORIZER_CONFIGURATION_ERROR'),
      ),
      metricNamespace: METRICS_NAMESPACE,
      metricName: `AuthorizerFailures-${config.stage}`,
      metricValue: '1',
    }).metric({ statistic: 'Sum', period: PERIOD, label: 'authorizer failures' });
    this.alarm('AuthorizerFailures', authorizerFailures, {
      threshold: 1,
      evaluationPeriods: 1,
      alarmDescription: 'The authorizer failed (crash, timeout or throttling): clients got 500 instead of 401/200',
    });

    for (const [name, fn] of functions.handlers) {
      // Handlers turn every error into a problem response: a Lambda error is a crash or a timeout.
      this.alarm(`${name}-errors`, fn.metricErrors({ period: PERIOD }), {
        threshold: 1,
        evaluationPeriods: 1,
        alarmDescription: `${name} crashed or timed out`,
      });
    }
    for (const fn of functions.all) {
      this.alarm(`${fn.node.id}-throttles`, fn.metricThrottles({ period: PERIOD }), {
        threshold: 1,
        evaluationPeriods: 1,
        alarmDescription: `${fn.node.id} was throttled (account concurrency exhausted)`,
      });
    }
    this.alarm('EventsTableThrottles', throttledRequests(tables.events, DYNAMODB_OPERATIONS.events), {
      threshold: 1,
      evaluationPeriods: 1,
      alarmDescription: 'DynamoDB throttled requests to the events table',
    });
    this.alarm('IdempotencyTableThrottles', throttledRequests(tables.idempotency, DYNAMODB_OPERATIONS.idempotency), {
      threshold: 1,
      evaluationPeriods: 1,
      alarmDescription: 'DynamoDB throttled requests to the idempotency table',
    });

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `museum-special-events-${config.stage}`,
      defaultInterval: Duration.hours(24),
    });
    const fns = functions.all;
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24 }),
      new cloudwatch.GraphWidget({
        title: 'Requests and errors',
        left: [stage.metricCount({ period: PERIOD, label: 'requests' })],
        right: [stage.metricClientError({ period: PERIOD, label: '4xx' }), stage.metricServerError({ period: PERIOD, label: '5xx' })],
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Latency (ms)',
        left: [
          stage.metricLatency({ statistic: 'p50', period: PERIOD, label: 'p50' }),
          p99Latency,
          stage.metricIntegrationLatency({ statistic: 'p99', period: PERIOD, label: 'integration p99' }),
        ],
        width: 12,
      }),
      new cloudwatch.GraphWidget({ title: 'Lambda errors', left: fns.map((fn) => fn.metricErrors({ period: PERIOD, label: fn.node.id })), width: 8 }),
      new cloudwatch.GraphWidget({
        title: 'Lambda duration p99 (ms)',
        left: fns.map((fn) => fn.metricDuration({ statistic: 'p99', period: PERIOD, label: fn.node.id })),
        width: 8,
      }),
      new cloudwatch.GraphWidget({ title: 'Lambda throttles', left: fns.map((fn) => fn.metricThrottles({ period: PERIOD, label: fn.node.id })), width: 8 }),
      new cloudwatch.GraphWidget({
        title: 'DynamoDB consumed capacity (events table)',
        left: [
          tables.events.metricConsumedReadCapacityUnits({ period: PERIOD, label: 'read units' }),
          tables.events.metricConsumedWriteCapacityUnits({ period: PERIOD, label: 'write units' }),
        ],
        width: 12,
      }),
      new cloudwatch.GraphWidget({ title: 'Authorizer failures', left: [authorizerFailures], width: 12 }),
    );
  }

  private alarm(id: string, metric: cloudwatch.IMetric, options: { threshold: number; evaluationPeriods: number; alarmDescription: string }) {
    const alarm = new cloudwatch.Alarm(this, `${pascalCase(id)}Alarm`, {
      metric,
      ...options,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No traffic is not a failure: a quiet night must not page anyone.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(new actions.SnsAction(this.topic));
    alarm.addOkAction(new actions.SnsAction(this.topic));
    this.alarms.push(alarm);
    return alarm;
  }
}

function throttledRequests(table: dynamodb.TableV2, operations: string[]): cloudwatch.IMetric {
  return table.metricThrottledRequestsForOperations({
    operations: operations as dynamodb.Operation[],
    period: PERIOD,
    label: 'throttled requests',
  });
}

function pascalCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, __: string, letter: string) => letter.toUpperCase());
}
