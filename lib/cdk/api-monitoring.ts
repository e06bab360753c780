// Alarms to an SNS topic and one dashboard. Production must name where alarms go (an e-mail, or
// an existing topic for chat integrations); without either, its template requires the AlarmEmail
// parameter, so CloudFormation refuses to deploy it. Every alarm needs a minimum volume or M of
// N periods, so one failed request on a quiet night pages no one. A monthly cost budget (AWS
// Budgets) notifies the same topic: what a flood of requests from many addresses may cost is not
// bounded by any limit a visitor shares, so it is watched. The topic: alarm-topic.ts; the
// access-log metrics and sums: alarm-metrics.ts; the dashboard: monitoring-dashboard.ts.
// Runbook: docs/DEPLOY.md.
import type * as budgets from 'aws-cdk-lib/aws-budgets';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { costBudget } from './cost-budget.ts';
import type { MuseumFunctions } from './museum-functions.ts';
import type { MuseumTables } from './museum-tables.ts';
import type { SpecialEventsApi } from './special-events-api.ts';
import type { StageConfig } from './stage-config.ts';
import { accessLogCount, errorTypeIs, PERIOD, sum } from './alarm-metrics.ts';
import { alarmTopic } from './alarm-topic.ts';
import { addMonitoringDashboard, type AuthenticationMetrics, type TrafficMetrics } from './monitoring-dashboard.ts';

/** Share of requests answered 5xx in five minutes that counts as failing. */
export const SERVER_ERROR_RATE_THRESHOLD = 0.05;
/** Below this many requests in five minutes, the 5xx rate and p99 latency say nothing. */
export const MINIMUM_REQUESTS = 20;
/** Requests refused 401 in five minutes (wrong or missing credentials) that look like guessing. */
export const FAILED_LOGIN_THRESHOLD = 100;
/**
 * Authorizer p99 duration (ms): a check takes ~10 ms (one GetItem, one HMAC), a cold environment's
 * first a few hundred ms; a p99 over a second for 15 minutes is CPU starvation or a slow table.
 */
export const AUTHORIZER_P99_DURATION_MS = 1000;

/**
 * The DynamoDB operations the functions call (lib/cdk/function-permissions.ts grants them; PutItem
 * and DeleteItem there also authorise the Puts and Deletes inside TransactWriteItems), whose
 * throttling and system errors the alarms watch. PutItem alone: a webhook delivery's attempt record.
 */
const DYNAMODB_OPERATIONS = {
  events: ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem', 'PutItem', 'TransactWriteItems'],
  idempotency: ['GetItem', 'TransactWriteItems'],
};

export interface ApiMonitoringProps {
  config: StageConfig;
  api: SpecialEventsApi;
  functions: MuseumFunctions;
  tables: MuseumTables;
}

interface AlarmOptions {
  threshold: number;
  /** Breaching periods out of `evaluationPeriods` that raise the alarm. */
  datapointsToAlarm: number;
  evaluationPeriods: number;
  alarmDescription: string;
}

export class ApiMonitoring extends Construct {
  readonly topic: sns.ITopic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;
  readonly costBudget: budgets.CfnBudget;

  constructor(scope: Construct, id: string, props: ApiMonitoringProps) {
    super(scope, id);
    const { config, api, functions, tables } = props;
    this.topic = alarmTopic(this, config);
    this.costBudget = costBudget(this, config, this.topic);
    const traffic = this.addTrafficAlarms(config, api);
    const authentication = this.addAuthenticationAlarms(config, api, functions.authorizer);
    this.addFunctionAlarms(functions);
    this.addTableAlarms(tables);
    this.dashboard = addMonitoringDashboard(this, config, this.alarms, { api, functions, tables, traffic, authentication });
  }

  /** The 5xx rate and p99 latency, each over a minimum of requests; their metrics for the dashboard. */
  private addTrafficAlarms(config: StageConfig, api: SpecialEventsApi): TrafficMetrics {
    const stage = api.api.deploymentStage;
    const requests = stage.metricCount({ statistic: 'Sum', period: PERIOD, label: 'requests' });
    // Not the stage's 5XXError metric: API Gateway counts a gateway response whose status was
    // modified as a 4XXError, and this API turns AUTHORIZER_FAILURE and
    // AUTHORIZER_CONFIGURATION_ERROR into 503 and INTEGRATION_FAILURE into 502. The access log
    // has the status every client actually got, whichever part of API Gateway answered.
    const serverErrors = accessLogCount(this, api, config, 'ServerErrors', logs.FilterPattern.stringValue('$.status', '=', '5*'));
    this.alarm(
      'ServerErrorRate',
      new cloudwatch.MathExpression({
        expression: `IF(requests >= ${MINIMUM_REQUESTS}, errors / requests, 0)`,
        usingMetrics: { requests, errors: serverErrors },
        period: PERIOD,
        label: '5xx rate',
      }),
      {
        threshold: SERVER_ERROR_RATE_THRESHOLD,
        datapointsToAlarm: 2,
        evaluationPeriods: 3,
        alarmDescription: `More than ${SERVER_ERROR_RATE_THRESHOLD * 100}% of requests answered 5xx in 2 of 3 five-minute periods with at least ${MINIMUM_REQUESTS} requests`,
      },
    );
    const p99Latency = stage.metricLatency({ statistic: 'p99', period: PERIOD, label: 'p99 latency' });
    this.alarm(
      'P99Latency',
      new cloudwatch.MathExpression({
        expression: `IF(requests >= ${MINIMUM_REQUESTS}, latency, 0)`,
        usingMetrics: { requests, latency: p99Latency },
        period: PERIOD,
        label: 'p99 latency (ms)',
      }),
      {
        threshold: config.latencyP99AlarmMs,
        datapointsToAlarm: 3,
        evaluationPeriods: 3,
        alarmDescription: `p99 latency above ${config.latencyP99AlarmMs} ms for 15 minutes with at least ${MINIMUM_REQUESTS} requests each 5 minutes`,
      },
    );
    return { requests, serverErrors, p99Latency };
  }

  /** The authorizer's failures, duration and throttling, and refused credentials (guessing). */
  private addAuthenticationAlarms(config: StageConfig, api: SpecialEventsApi, authorizer: lambda.IFunction): AuthenticationMetrics {
    // The authorizer's own Errors metric counts every rejected password (throwing 'Unauthorized'
    // is how a Lambda authorizer says 401), so outcomes are counted from the access log instead.
    const authorizerFailures = accessLogCount(
      this,
      api,
      config,
      'AuthorizerFailures',
      errorTypeIs('AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR'),
    );
    this.alarm('AuthorizerFailures', authorizerFailures, {
      threshold: 5,
      datapointsToAlarm: 2,
      evaluationPeriods: 3,
      alarmDescription: 'The authorizer crashed, timed out, was throttled or could not read the users table: clients got 503',
    });
    const failedLogins = accessLogCount(this, api, config, 'FailedLogins', errorTypeIs('UNAUTHORIZED'));
    this.alarm('FailedLogins', failedLogins, {
      threshold: FAILED_LOGIN_THRESHOLD,
      datapointsToAlarm: 2,
      evaluationPeriods: 3,
      alarmDescription: `At least ${FAILED_LOGIN_THRESHOLD} requests refused 401 (wrong or missing credentials) in 2 of 3 five-minute periods: password guessing?`,
    });
    this.alarm('AuthorizerThrottles', authorizer.metricThrottles({ period: PERIOD, statistic: 'Sum' }), {
      threshold: 10,
      datapointsToAlarm: 2,
      evaluationPeriods: 3,
      alarmDescription: 'The authorizer hit its reserved concurrency: a flood of new credentials, or the cap is too low for real traffic',
    });
    const authorizerDuration = authorizer.metricDuration({ period: PERIOD, statistic: 'p99', label: 'authorizer p99 (ms)' });
    this.alarm('AuthorizerDuration', authorizerDuration, {
      threshold: AUTHORIZER_P99_DURATION_MS,
      datapointsToAlarm: 3,
      evaluationPeriods: 3,
      alarmDescription: `Authorizer p99 duration above ${AUTHORIZER_P99_DURATION_MS} ms for 15 minutes (a check takes ~10 ms)`,
    });
    return { authorizerFailures, failedLogins };
  }

  /** Crashes, timeouts and throttling of the event handlers, and of the webhook functions. */
  private addFunctionAlarms(functions: MuseumFunctions): void {
    // An alarm holds at most 10 metrics: the event handlers in one pair of alarms, the webhook
    // functions (eight operations, the consumer and the delivery function) in another.
    const isWebhook = (name: string) => name.includes('webhook');
    const handlers = [...functions.handlers].filter(([name]) => !isWebhook(name)).map(([, fn]) => fn);
    const webhookFunctions = [...functions.handlers]
      .filter(([name]) => isWebhook(name))
      .map(([, fn]) => fn)
      .concat([...functions.background.values()]);
    // Handlers turn every error into a problem response: a Lambda error is a crash or a timeout.
    this.alarm(
      'HandlerErrors',
      sum(
        'errors',
        handlers.map((fn) => fn.metricErrors({ period: PERIOD, statistic: 'Sum' })),
      ),
      {
        threshold: 5,
        datapointsToAlarm: 2,
        evaluationPeriods: 3,
        alarmDescription: 'Handlers crashed or timed out at least 5 times in 2 of 3 five-minute periods',
      },
    );
    this.alarm(
      'HandlerThrottles',
      sum(
        'throttles',
        handlers.map((fn) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum' })),
      ),
      {
        threshold: 5,
        datapointsToAlarm: 2,
        evaluationPeriods: 3,
        alarmDescription: 'Handlers were throttled (the account concurrency is exhausted) in 2 of 3 five-minute periods',
      },
    );
    this.alarm(
      'WebhookFunctionErrors',
      sum(
        'errors',
        webhookFunctions.map((fn) => fn.metricErrors({ period: PERIOD, statistic: 'Sum' })),
      ),
      {
        threshold: 5,
        datapointsToAlarm: 2,
        evaluationPeriods: 3,
        alarmDescription: 'Webhook functions crashed or timed out at least 5 times in 2 of 3 five-minute periods',
      },
    );
    this.alarm(
      'WebhookFunctionThrottles',
      sum(
        'throttles',
        webhookFunctions.map((fn) => fn.metricThrottles({ period: PERIOD, statistic: 'Sum' })),
      ),
      {
        threshold: 5,
        datapointsToAlarm: 2,
        evaluationPeriods: 3,
        alarmDescription: 'Webhook functions were throttled in 2 of 3 five-minute periods',
      },
    );
  }

  /** DynamoDB throttling and system errors on the operations the functions call, per table. */
  private addTableAlarms(tables: MuseumTables): void {
    for (const [name, table, operations] of [
      ['EventsTable', tables.events, DYNAMODB_OPERATIONS.events],
      ['IdempotencyTable', tables.idempotency, DYNAMODB_OPERATIONS.idempotency],
    ] as const) {
      /* eslint-disable @typescript-eslint/no-unsafe-enum-assignment -- the operation names are the values of dynamodb.Operation */
      this.alarm(
        `${name}Throttles`,
        table.metricThrottledRequestsForOperations({ operations: [...operations] as dynamodb.Operation[], period: PERIOD }),
        {
          threshold: 5,
          datapointsToAlarm: 2,
          evaluationPeriods: 3,
          alarmDescription: `DynamoDB throttled requests to the ${name} in 2 of 3 five-minute periods`,
        },
      );
      this.alarm(
        `${name}SystemErrors`,
        table.metricSystemErrorsForOperations({ operations: [...operations] as dynamodb.Operation[], period: PERIOD }),
        {
          threshold: 5,
          datapointsToAlarm: 2,
          evaluationPeriods: 3,
          alarmDescription: `DynamoDB answered 5xx to requests to the ${name} in 2 of 3 five-minute periods`,
        },
      );
      /* eslint-enable @typescript-eslint/no-unsafe-enum-assignment */
    }
  }

  private alarm(id: string, metric: cloudwatch.IMetric, options: AlarmOptions) {
    const alarm = new cloudwatch.Alarm(this, `${id}Alarm`, {
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
