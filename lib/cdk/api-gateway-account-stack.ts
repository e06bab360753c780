// `MuseumApiGatewayAccount`: API Gateway's one setting per account and region, the IAM role it
// uses to write execution logs. Every REST API in the region relies on it, so exactly one stack
// owns it: this one, deployed once per account and region (the production app includes it; a
// preview never does). Stages only turn execution logging on; without this setting their
// deployment fails, so deploy this stack first in a fresh account (docs/DEPLOY.md).
import { RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

export const API_GATEWAY_ACCOUNT_STACK_NAME = 'MuseumApiGatewayAccount';

export class ApiGatewayAccountStack extends Stack {
  readonly cloudWatchRole: iam.Role;

  constructor(scope: Construct, id: string, props: StackProps = {}) {
    super(scope, id, {
      description: 'API Gateway account settings (once per account and region): the CloudWatch Logs role for execution logs',
      terminationProtection: true,
      ...props,
    });
    this.cloudWatchRole = new iam.Role(this, 'CloudWatchRole', {
      assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      description: 'Lets API Gateway write execution logs of every REST API stage in this region',
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    // Kept if the stack is ever deleted: the account setting would otherwise point at a missing role.
    this.cloudWatchRole.applyRemovalPolicy(RemovalPolicy.RETAIN);
    const account = new apigw.CfnAccount(this, 'Account', { cloudWatchRoleArn: this.cloudWatchRole.roleArn });
    account.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(this.cloudWatchRole).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: 'The account-level role API Gateway uses to write execution logs; AWS maintains its exact permissions.',
    });
  }
}
