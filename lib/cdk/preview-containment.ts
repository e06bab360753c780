// What a preview may create in the preview account, for the stacks a pull request deploys. The
// default CDK bootstrap gives CloudFormation AdministratorAccess, and a pull request's workflow
// (which the branch itself controls) can deploy any template with it: one Lambda role with
// AdministratorAccess and the branch owns the account. Instead (docs/DEPLOY.md, threat model):
// - PREVIEW_EXECUTION_POLICY is CloudFormation's execution policy in the preview account
//   (`cdk bootstrap --cloudformation-execution-policies`): only the services the preview stacks
//   consist of (test/infra/preview-containment.test.ts derives them from the templates), reading
//   the function bundles from the bootstrap's assets bucket, and IAM only on roles named after
//   preview stacks, only with the permissions boundary attached.
// - PREVIEW_BOUNDARY caps every role a preview creates (the functions' roles) at what the
//   handlers do: DynamoDB on preview tables, their logs, X-Ray. previews apply it to every role
//   (lib/cdk/museum-app.ts), and the execution policy refuses a role without it.
import { DefaultStackSynthesizer, Token, Validations, type Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

export const PREVIEW_BOUNDARY_NAME = 'museum-preview-boundary';
export const PREVIEW_EXECUTION_POLICY_NAME = 'museum-preview-cfn-execution';
/** Name prefixes CloudFormation gives the resources of preview stacks (it names them after the stack). */
const PREVIEW_PREFIXES = ['MuseumApi-pr-*', 'MuseumMockApi-pr-*'];
/** The services whose resources make up a preview's templates (an API stack without WAF, alarms or canaries, and the mock). */
export const PREVIEW_SERVICES = ['apigateway', 'lambda', 'dynamodb', 'logs'] as const;

export function addPreviewContainment(stack: Stack): { boundary: iam.ManagedPolicy; execution: iam.ManagedPolicy } {
  const arn = (service: string, resource: string, names: string[], region = stack.region) =>
    names.map((name) => stack.formatArn({ service, region, resource, resourceName: name }));
  const boundary = new iam.ManagedPolicy(stack, 'PreviewBoundary', {
    managedPolicyName: PREVIEW_BOUNDARY_NAME,
    description: 'Permissions boundary of every role a pull-request preview creates',
    statements: [
      new iam.PolicyStatement({
        actions: ['dynamodb:*'],
        resources: [
          ...arn('dynamodb', 'table', PREVIEW_PREFIXES),
          ...arn(
            'dynamodb',
            'table',
            PREVIEW_PREFIXES.map((p) => `${p}/index/*`),
          ),
        ],
      }),
      new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: ['*'] }),
      new iam.PolicyStatement({ actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], resources: ['*'] }),
    ],
  });
  const roles = arn('iam', 'role', PREVIEW_PREFIXES, '');
  const withBoundary = { StringEquals: { 'iam:PermissionsBoundary': boundary.managedPolicyArn } };
  const qualifier =
    (stack.node.tryGetContext('@aws-cdk/core:bootstrapQualifier') as string | undefined) ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER;
  const assetsBucket = DefaultStackSynthesizer.DEFAULT_FILE_ASSETS_BUCKET_NAME.replace('${Qualifier}', qualifier)
    .replace('${AWS::AccountId}', stack.account)
    .replace('${AWS::Region}', stack.region);
  const execution = new iam.ManagedPolicy(stack, 'PreviewExecution', {
    managedPolicyName: PREVIEW_EXECUTION_POLICY_NAME,
    description: 'CloudFormation execution policy of the preview account (cdk bootstrap --cloudformation-execution-policies)',
    statements: [
      // The services the API and mock stacks consist of.
      new iam.PolicyStatement({ actions: PREVIEW_SERVICES.map((service) => `${service}:*`), resources: ['*'] }),
      // Lambda fetches a function's code from S3 with the credentials of whoever calls
      // CreateFunction or UpdateFunctionCode, here CloudFormation's role ("Your access has been
      // denied by S3, please make sure your request credentials have permission to GetObject").
      // The bucket's KMS key (new or AWS managed) lets account principals decrypt through S3 in
      // its key policy, so no kms: permission is needed.
      new iam.PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [stack.formatArn({ service: 's3', region: '', account: '', resource: assetsBucket, resourceName: '*' })],
      }),
      // The templates' BootstrapVersion parameter reads this SSM parameter.
      new iam.PolicyStatement({
        actions: ['ssm:GetParameters'],
        resources: arn('ssm', 'parameter', [`cdk-bootstrap/${qualifier}/version`]),
      }),
      // Roles: only preview-named ones, only created or given policies with the boundary on.
      new iam.PolicyStatement({
        actions: ['iam:CreateRole', 'iam:PutRolePolicy', 'iam:AttachRolePolicy'],
        resources: roles,
        conditions: withBoundary,
      }),
      new iam.PolicyStatement({
        actions: [
          'iam:GetRole',
          'iam:GetRolePolicy',
          'iam:DeleteRole',
          'iam:DeleteRolePolicy',
          'iam:DetachRolePolicy',
          'iam:TagRole',
          'iam:UntagRole',
          'iam:UpdateRoleDescription',
          'iam:PassRole',
          'iam:ListRoleTags',
        ],
        resources: roles,
      }),
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        actions: [
          'iam:DeleteRolePermissionsBoundary',
          'iam:PutRolePermissionsBoundary',
          'iam:CreateUser',
          'iam:CreateAccessKey',
          'iam:CreatePolicyVersion',
          'iam:SetDefaultPolicyVersion',
        ],
        resources: ['*'],
      }),
    ],
  });
  // cdk-nag's IAM5 flags every wildcard; each is the point of these two policies.
  const literal = (value: string, token: string) => (Token.isUnresolved(value) ? token : value);
  const findingArn = (service: string, region: string, resource: string) =>
    `arn:${literal(stack.partition, '<AWS::Partition>')}:${service}:${region && literal(region, '<AWS::Region>')}:${literal(stack.account, '<AWS::AccountId>')}:${resource}`;
  const reason =
    'A preview containment policy: services the preview stacks use, resources named after preview stacks, IAM only with the boundary (lib/cdk/preview-containment.ts).';
  Validations.of(boundary).acknowledge(
    { id: 'AwsSolutions-IAM5[Action::dynamodb:*]', reason },
    { id: 'AwsSolutions-IAM5[Resource::*]', reason: 'Log streams and X-Ray segments have no narrower resource.' },
    ...PREVIEW_PREFIXES.flatMap((prefix) => [`table/${prefix}`, `table/${prefix}/index/*`]).map((resource) => ({
      id: `AwsSolutions-IAM5[Resource::${findingArn('dynamodb', stack.region, resource)}]`,
      reason,
    })),
  );
  Validations.of(execution).acknowledge(
    ...PREVIEW_SERVICES.map((service) => ({ id: `AwsSolutions-IAM5[Action::${service}:*]`, reason })),
    { id: 'AwsSolutions-IAM5[Resource::*]', reason },
    {
      id: `AwsSolutions-IAM5[Resource::arn:${literal(stack.partition, '<AWS::Partition>')}:s3:::${assetsBucket}/*]`,
      reason: "The function bundles in the CDK bootstrap's assets bucket (names are content hashes).",
    },
    ...PREVIEW_PREFIXES.map((prefix) => ({ id: `AwsSolutions-IAM5[Resource::${findingArn('iam', '', `role/${prefix}`)}]`, reason })),
  );
  return { boundary, execution };
}

/** Every role of a preview stack gets the boundary (the execution policy refuses roles without it). */
export function applyPreviewBoundary(stack: Stack, scope: Construct = stack): void {
  iam.PermissionsBoundary.of(scope).apply(iam.ManagedPolicy.fromManagedPolicyName(stack, 'PreviewBoundary', PREVIEW_BOUNDARY_NAME));
}
