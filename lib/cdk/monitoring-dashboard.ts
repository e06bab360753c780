// The stage's CloudWatch dashboard (part of ApiMonitoring, lib/cdk/api-monitoring.ts): the alarms'
// states first, then requests, latency, the functions, the events table's capacity,
// authentication and the access-log queries the runbooks start from (docs/DEPLOY.md). Where an
// alarm watches a metric, the graph draws that same metric (handed over by ApiMonitoring), so a
// graph and its alarm never disagree about what they count.
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';
import { PERIOD } from './alarm-metrics.ts';
import type { MuseumFunctions } from './museum-functions.ts';
import type { MuseumTables } from './museum-tables.ts';
import type { SpecialEventsApi } from './special-events-api.ts';
import type { StageConfig } from './stage-config.ts';

/** The stage's request count, 5xx count (from the access log) and p99 latency, as the alarms read them. */
export interface TrafficMetrics {
  requests: cloudwatch.IMetric;
  serverErrors: cloudwatch.IMetric;
  p99Latency: cloudwatch.IMetric;
}

/** Authorizer failures and refused credentials (401), counted from the access log. */
export interface AuthenticationMetrics {
  authorizerFailures: cloudwatch.IMetric;
  failedLogins: cloudwatch.IMetric;
}

/** What the dashboard shows: the stack's parts and the metrics the alarms already made. */
export interface DashboardSources {
  api: SpecialEventsApi;
  functions: MuseumFunctions;
  tables: MuseumTables;
  traffic: TrafficMetrics;
  authentication: AuthenticationMetrics;
}

/** The dashboard, as `Dashboard` in `scope` (the monitoring construct). */
export function addMonitoringDashboard(
  scope: Construct,
  config: StageConfig,
  alarms: cloudwatch.IAlarm[],
  sources: DashboardSources,
): cloudwatch.Dashboard {
  const dashboard = new cloudwatch.Dashboard(scope, 'Dashboard', {
    dashboardName: `museum-special-events-${config.stage}`,
    defaultInterval: Duration.hours(24),
  });
  dashboard.addWidgets(
    new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms, width: 24 }),
    ...trafficWidgets(sources),
    ...functionWidgets(sources.functions),
    new cloudwatch.GraphWidget({
      title: 'DynamoDB consumed capacity (events table)',
      left: [
        sources.tables.events.metricConsumedReadCapacityUnits({ period: PERIOD, label: 'read units' }),
        sources.tables.events.metricConsumedWriteCapacityUnits({ period: PERIOD, label: 'write units' }),
      ],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Authentication',
      left: [sources.authentication.failedLogins],
      right: [sources.authentication.authorizerFailures],
      width: 12,
    }),
    ...accessLogQueryWidgets(sources.api),
  );
  return dashboard;
}

/** Requests and errors, and latency with the P99Latency runbook's split. */
function trafficWidgets({ api, functions, traffic }: DashboardSources): cloudwatch.IWidget[] {
  const stage = api.api.deploymentStage;
  return [
    new cloudwatch.GraphWidget({
      title: 'Requests and errors',
      left: [traffic.requests],
      right: [stage.metricClientError({ period: PERIOD, label: '4xx' }), traffic.serverErrors],
      width: 12,
    }),
    new cloudwatch.GraphWidget({
      title: 'Latency (ms)',
      left: [
        stage.metricLatency({ statistic: 'p50', period: PERIOD, label: 'p50' }),
        traffic.p99Latency,
        stage.metricIntegrationLatency({ statistic: 'p99', period: PERIOD, label: 'integration p99' }),
        // The P99Latency runbook's split: time in the authorizer vs. in the integration.
        functions.authorizer.metricDuration({ statistic: 'p99', period: PERIOD, label: 'authorizer p99' }),
      ],
      width: 12,
    }),
  ];
}

/** Errors, p99 duration and throttles of every function, one line each. */
function functionWidgets(functions: MuseumFunctions): cloudwatch.IWidget[] {
  const fns = functions.all;
  return [
    new cloudwatch.GraphWidget({
      title: 'Lambda errors',
      left: fns.map((fn) => fn.metricErrors({ period: PERIOD, label: fn.node.id })),
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Lambda duration p99 (ms)',
      left: fns.map((fn) => fn.metricDuration({ statistic: 'p99', period: PERIOD, label: fn.node.id })),
      width: 8,
    }),
    new cloudwatch.GraphWidget({
      title: 'Lambda throttles',
      left: fns.map((fn) => fn.metricThrottles({ period: PERIOD, label: fn.node.id })),
      width: 8,
    }),
  ];
}

// What the ServerErrorRate and FailedLogins runbooks look up first, without opening Logs Insights.
function accessLogQueryWidgets(api: SpecialEventsApi): cloudwatch.IWidget[] {
  return [
    new cloudwatch.LogQueryWidget({
      title: '5xx by resource and gateway response (access log)',
      logGroupNames: [api.accessLogs.logGroupName],
      queryLines: [
        'filter status like /^5/',
        'stats count(*) as answers by resourcePath, errorType, integrationStatus',
        'sort answers desc',
        'limit 20',
      ],
      width: 12,
    }),
    new cloudwatch.LogQueryWidget({
      title: '401 by client address (access log)',
      logGroupNames: [api.accessLogs.logGroupName],
      queryLines: ['filter status = "401"', 'stats count(*) as refused by ip', 'sort refused desc', 'limit 20'],
      width: 12,
    }),
  ];
}
