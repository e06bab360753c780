// The metrics the API's alarms watch, built from the stage's access log and other metrics, all per
// five minutes (lib/cdk/api-monitoring.ts).
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { METRICS_NAMESPACE } from './museum-functions.ts';
import type { SpecialEventsApi } from './special-events-api.ts';
import type { StageConfig } from './stage-config.ts';

/** The period of every alarm's metric. */
export const PERIOD = Duration.minutes(5);

/** Access-log lines whose gateway response type is one of `errorTypes`. */
export function errorTypeIs(...errorTypes: string[]): logs.IFilterPattern {
  return logs.FilterPattern.any(...errorTypes.map((type) => logs.FilterPattern.stringValue('$.errorType', '=', type)));
}

/** Access-log lines matching `pattern`, per five minutes. */
export function accessLogCount(
  scope: Construct,
  api: SpecialEventsApi,
  config: StageConfig,
  name: string,
  pattern: logs.IFilterPattern,
): cloudwatch.Metric {
  return new logs.MetricFilter(scope, `${name}Filter`, {
    logGroup: api.accessLogs,
    filterPattern: pattern,
    metricNamespace: METRICS_NAMESPACE,
    metricName: `${name}-${config.stage}`,
    metricValue: '1',
  }).metric({ statistic: 'Sum', period: PERIOD, label: name });
}

export function sum(label: string, metrics: cloudwatch.IMetric[]): cloudwatch.MathExpression {
  const usingMetrics = Object.fromEntries(metrics.map((metric, index) => [`m${index}`, metric]));
  return new cloudwatch.MathExpression({
    expression: `SUM([${Object.keys(usingMetrics).join(', ')}])`,
    usingMetrics,
    period: PERIOD,
    label,
  });
}
