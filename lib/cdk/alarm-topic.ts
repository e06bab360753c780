// Where the API's alarms go: the SNS topic they publish to (lib/cdk/api-monitoring.ts).
import { CfnParameter, Stack } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import type { StageConfig } from './stage-config.ts';

/**
 * The topic alarms publish to: an existing one (`-c alarmTopicArn`), or the stack's own with an
 * e-mail subscription. Production without either gets a required AlarmEmail parameter.
 */
export function alarmTopic(scope: Construct, config: StageConfig): sns.ITopic {
  if (config.alarmTopicArn) return sns.Topic.fromTopicArn(scope, 'AlarmTopic', config.alarmTopicArn);
  const topic = new sns.Topic(scope, 'AlarmTopic', { displayName: `Museum API alarms (${config.stage})`, enforceSSL: true });
  const email =
    config.alarmEmail ??
    (config.isProduction
      ? new CfnParameter(Stack.of(scope), 'AlarmEmail', {
          type: 'String',
          description: 'E-mail address the production alarms notify (or synthesize with -c alarmEmail=... or -c alarmTopicArn=...)',
          allowedPattern: '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
          constraintDescription: 'Production needs an alarm destination: an e-mail address',
        }).valueAsString
      : undefined);
  if (email) topic.addSubscription(new subscriptions.EmailSubscription(email));
  return topic;
}
