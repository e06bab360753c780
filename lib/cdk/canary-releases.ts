// Production releases reach traffic gradually: CodeDeploy moves each function's `live` alias to
// the new version for 10% of invocations for 5 minutes, then for all of them, and moves it back
// by itself if a release alarm fires meanwhile (CloudFormation waits for the deployment, so a
// rolled-back release also fails the `cdk deploy` and the stack update rolls back). Previews
// have none of this: their alias moves at once.
//
// The release alarms are not the paging alarms of lib/cdk/api-monitoring.ts: those need 2 or 3
// five-minute periods, longer than the canary. These look at one minute, and at the new version
// where Lambda can tell versions apart (ExecutedVersion), so 10% of traffic is enough to trip them.
import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, type MuseumFunctions } from './museum-functions.ts';
import type { SpecialEventsApi } from './special-events-api.ts';
import type { StageConfig } from './stage-config.ts';

export const CANARY_CONFIG = codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES;

/**
 * A stage's release history: one SSM parameter per record under this path, named
 * `<path>/<epoch milliseconds>-<event>-<release>` and never overwritten, so no record expires
 * (a single parameter's history keeps only its 100 newest versions,
 * https://docs.aws.amazon.com/systems-manager/latest/userguide/sysman-paramstore-versions.html).
 * The production workflow adds `released` once a deploy's canaries and smoke test have passed (the
 * versions come from the stack output ReleaseVersions); bin/rollback.sh adds `rolled-back` and
 * returns only to released records never rolled back from.
 */
export function releaseHistoryPath(stage: string): string {
  return `/museum-special-events/${stage}/releases`;
}
/** Crashes or timeouts of the new version in one minute that stop its release. */
export const RELEASE_ERRORS_PER_MINUTE = 3;
/** 5xx answers (any source, from the access log) in one minute that stop a release. */
export const RELEASE_SERVER_ERRORS_PER_MINUTE = 5;

const MINUTE = Duration.minutes(1);

export class CanaryReleases extends Construct {
  readonly deploymentGroups: codedeploy.LambdaDeploymentGroup[] = [];
  /** Alarms any of which means "this release is bad". */
  readonly releaseAlarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: { config: StageConfig; functions: MuseumFunctions; api: SpecialEventsApi }) {
    super(scope, id);
    const { config, functions, api } = props;
    // Whatever the new version is, clients answered 5xx: the integration failing, the
    // authorizer failing (503), a handler's own 500 problem. From the access log, so modified
    // gateway responses count (the stage's 5XXError metric misses them).
    const serverErrors = this.alarm(
      'ReleaseServerErrors',
      new logs.MetricFilter(this, 'ServerErrorsFilter', {
        logGroup: api.accessLogs,
        filterPattern: logs.FilterPattern.stringValue('$.status', '=', '5*'),
        metricNamespace: METRICS_NAMESPACE,
        metricName: `ReleaseServerErrors-${config.stage}`,
        metricValue: '1',
      }).metric({ statistic: 'Sum', period: MINUTE }),
      RELEASE_SERVER_ERRORS_PER_MINUTE,
      `At least ${RELEASE_SERVER_ERRORS_PER_MINUTE} answers of 5xx in one minute during a release: CodeDeploy rolls the release back`,
    );

    // One application and one service role for every function's deployment group, instead of one each.
    const application = new codedeploy.LambdaApplication(this, 'Application');
    const role = new iam.Role(this, 'DeployRole', {
      assumedBy: new iam.ServicePrincipal('codedeploy.amazonaws.com'),
      description: 'CodeDeploy shifting traffic between versions of the API functions',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "AWS's narrowest policy for CodeDeploy Lambda deployments (move aliases, read alarms, invoke CodeDeployHook_* functions only); a copy would drift from what the service needs.",
    });

    for (const { fn, alias } of functions.allLive) {
      const name = fn.node.id;
      const alarms = [serverErrors];
      // The authorizer's Errors count every refused password (throwing is how it says 401): its
      // failures are the 503s in the access log, already watched by serverErrors.
      if (fn !== functions.authorizer) {
        alarms.push(
          this.alarm(
            `${name}NewVersionErrors`,
            newVersionErrors(fn, alias),
            RELEASE_ERRORS_PER_MINUTE,
            `The new version of ${name} crashed or timed out at least ${RELEASE_ERRORS_PER_MINUTE} times in one minute: CodeDeploy rolls it back`,
          ),
        );
      }
      this.deploymentGroups.push(
        new codedeploy.LambdaDeploymentGroup(this, `${name}Deployment`, {
          alias,
          application,
          role,
          deploymentConfig: CANARY_CONFIG,
          alarms,
          autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
        }),
      );
    }
  }

  private alarm(id: string, metric: cloudwatch.IMetric, threshold: number, description: string): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, `${id}Alarm`, {
      metric,
      threshold,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: description,
    });
    this.releaseAlarms.push(alarm);
    return alarm;
  }
}

/** Errors of the version the alias now points to, through the alias only. */
function newVersionErrors(fn: lambda.Function, alias: lambda.Alias): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/Lambda',
    metricName: 'Errors',
    dimensionsMap: {
      FunctionName: fn.functionName,
      Resource: `${fn.functionName}:${alias.aliasName}`,
      ExecutedVersion: alias.version.version,
    },
    statistic: 'Sum',
    period: MINUTE,
  });
}
