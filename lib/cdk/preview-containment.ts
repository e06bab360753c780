// What a preview may create in the preview account, for the stacks a pull request deploys. The
// default CDK bootstrap gives CloudFormation AdministratorAccess, and a pull request's workflow
// (which the branch itself controls) can deploy any template with it: one Lambda role with
// AdministratorAccess and the branch owns the account. Instead (docs/DEPLOY.md, threat model):
// - The execution policies are CloudFormation's role's policies in the preview account
//   (`cdk bootstrap --cloudformation-execution-policies`): the actions AWS's resource provider
//   schemas list for the resource types the stacks consist of (lib/cdk/resource-handler-permissions.json;
//   test/infra/preview-containment.test.ts derives them from the synthesized templates), reading
//   the function bundles from the bootstrap's assets bucket, and IAM only on roles named after
//   preview stacks, only with the permissions boundary attached.
// - PREVIEW_BOUNDARY caps every role a preview creates (the functions' roles) at what the
//   functions do: DynamoDB on preview tables and their streams, preview queues, the account's
//   secrets and keys (read and decrypt), their logs, X-Ray. previews apply it to every role
//   (lib/cdk/museum-app.ts), and the execution policy refuses a role without it.
import { readFileSync } from 'node:fs';
import { ArnFormat, DefaultStackSynthesizer, Token, Validations, type Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

export const PREVIEW_BOUNDARY_NAME = 'museum-preview-boundary';
/** The execution policy with the IAM, S3 and SSM statements (the containment); the services' actions follow in PREVIEW_SERVICES_POLICY_PREFIX<n>. */
export const PREVIEW_EXECUTION_POLICY_NAME = 'museum-preview-cfn-execution';
export const PREVIEW_SERVICES_POLICY_PREFIX = 'museum-preview-cfn-execution-services-';
/** Name prefixes CloudFormation gives the resources of preview stacks (it names them after the stack). */
const PREVIEW_PREFIXES = ['MuseumApi-pr-*', 'MuseumMockApi-pr-*'];

/**
 * IAM's limit on a managed policy document, whitespace not counted ("Managed policy size: 6,144
 * characters", https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html): the
 * services' actions do not fit one policy, so they are split over several.
 */
export const MANAGED_POLICY_MAX_CHARACTERS = 6144;

export interface HandlerPermissions {
  schema: string;
  create: string[];
  read: string[];
  update: string[];
  delete: string[];
  tagging: string[];
}

/**
 * What CloudFormation's role needs per resource type: the permissions of the handlers
 * CloudFormation calls during a deploy and a deletion (create, read, update, delete; read "as part
 * of a stack update operation when detailed information about the resource's current state is
 * required", https://docs.aws.amazon.com/cloudformation-cli/latest/userguide/resource-type-develop.html)
 * and tagging (the stacks' tags), copied from AWS's schemas by scripts/resource-handler-permissions.ts.
 */
export const RESOURCE_HANDLER_PERMISSIONS = (
  JSON.parse(readFileSync(new URL('./resource-handler-permissions.json', import.meta.url), 'utf8')) as {
    types: Record<string, HandlerPermissions>;
  }
).types;

/** The actions a deploy and a deletion of these resource types need, from their schemas. */
export function handlerActions(types: Iterable<string>): Set<string> {
  const actions = new Set<string>();
  for (const type of types) {
    const permissions = RESOURCE_HANDLER_PERMISSIONS[type];
    if (!permissions) throw new Error(`${type} has no entry in lib/cdk/resource-handler-permissions.json`);
    for (const handler of ['create', 'read', 'update', 'delete', 'tagging'] as const)
      for (const action of permissions[handler]) actions.add(action);
  }
  return actions;
}

/**
 * Actions the schemas list that the preview account's CloudFormation role is not given, and why.
 * A schema lists what any configuration of its type may need; these serve configurations the
 * stacks do not use, or would undo the containment.
 */
export const WITHHELD_ACTIONS: { actions: RegExp; reason: string }[] = [
  {
    actions: /^iam:(PutRolePermissionsBoundary|DeleteRolePermissionsBoundary)$/,
    reason: "Replacing or removing a role's boundary would undo the containment (also denied explicitly); roles get it at creation.",
  },
  {
    actions: /^iam:(Put|Get|Delete)(User|Group)Policy$/,
    reason: 'The stacks attach policies to roles only (AWS::IAM::Policy on users and groups).',
  },
  {
    actions: /^s3:(GetBucketPolicy|PutBucketPolicy)$/,
    reason:
      "WAF logs go to a CloudWatch Logs group, never an S3 bucket; PutBucketPolicy could rewrite the bootstrap assets bucket's policy.",
  },
  { actions: /^s3:REST\.PUT\.OBJECT$/, reason: 'Not an IAM action (an S3 server access log operation name in the LogGroup schema).' },
  { actions: /^firehose:/, reason: 'No log group or web ACL of the stacks delivers to Kinesis Data Firehose.' },
  {
    actions: /^iam:DescribeOrganization$/,
    reason: "Not an IAM action (the WAF logging schema lists it; IAM's actions, as cfn-lint's W3037 checks them, have no such name).",
  },
  {
    actions: /^(amplify|apprunner|appsync|cognito-idp|bedrock-agentcore|elasticloadbalancing):|^ec2:\w*VerifiedAccess/,
    reason: 'The web ACL is associated with the REST API stage only (API Gateway), never with these services.',
  },
];

export function withheld(action: string): string | undefined {
  return WITHHELD_ACTIONS.find((rule) => rule.actions.test(action))?.reason;
}

/** IAM actions that create a role or give it a policy: allowed only with the boundary attached. */
const BOUNDED_IAM_ACTIONS = ['iam:CreateRole', 'iam:PutRolePolicy', 'iam:AttachRolePolicy'];
/** Service-linked roles: AWS defines their policies, and they live under `role/aws-service-role/`. */
const SERVICE_LINKED_IAM_ACTIONS = ['iam:CreateServiceLinkedRole'];

export function addPreviewContainment(stack: Stack): { boundary: iam.ManagedPolicy; execution: iam.ManagedPolicy[] } {
  const boundary = previewBoundaryPolicy(stack);
  const qualifier = bootstrapQualifier(stack);
  const assetsBucket = DefaultStackSynthesizer.DEFAULT_FILE_ASSETS_BUCKET_NAME.replace('${Qualifier}', qualifier)
    .replace('${AWS::AccountId}', stack.account)
    .replace('${AWS::Region}', stack.region);
  const granted = [...handlerActions(Object.keys(RESOURCE_HANDLER_PERMISSIONS))].filter((action) => !withheld(action)).sort();
  const containment = containmentPolicy(stack, { granted, boundary, qualifier, assetsBucket });
  const servicePolicies = servicesPolicies(stack, granted);
  acknowledgeBoundaryFindings(stack, boundary);
  acknowledgeExecutionFindings(stack, [containment, ...servicePolicies], { granted, assetsBucket });
  return { boundary, execution: [containment, ...servicePolicies] };
}

/** ARNs of `names` of one resource type in the stack's account (and region, unless given). */
function arnsOf(stack: Stack, service: string, resource: string, names: string[], region = stack.region): string[] {
  return names.map((name) => stack.formatArn({ service, region, resource, resourceName: name }));
}

function bootstrapQualifier(stack: Stack): string {
  return (stack.node.tryGetContext('@aws-cdk/core:bootstrapQualifier') as string | undefined) ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER;
}

/** The granted actions of one service (`dynamodb` for `dynamodb:GetItem`). */
function ofService(granted: string[], service: string): string[] {
  return granted.filter((action) => action.startsWith(`${service}:`));
}

function previewBoundaryPolicy(stack: Stack): iam.ManagedPolicy {
  return new iam.ManagedPolicy(stack, 'PreviewBoundary', {
    managedPolicyName: PREVIEW_BOUNDARY_NAME,
    description: 'Permissions boundary of every role a pull-request preview creates',
    statements: [
      new iam.PolicyStatement({
        actions: ['dynamodb:*'],
        resources: [
          ...arnsOf(stack, 'dynamodb', 'table', PREVIEW_PREFIXES),
          ...arnsOf(
            stack,
            'dynamodb',
            'table',
            PREVIEW_PREFIXES.map((p) => `${p}/index/*`),
          ),
        ],
      }),
      // A stream consumer's event source mapping lists a table's streams with ListStreams, which
      // has no resource-level permission (streams themselves fall under the tables above).
      new iam.PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }),
      // The webhook queues (CloudFormation names them after the stack), the credential key and
      // webhook secrets (secret names are generated without the stack's name, so any secret of
      // the preview account), and the keys that encrypt them.
      new iam.PolicyStatement({
        actions: [
          'sqs:SendMessage',
          'sqs:ReceiveMessage',
          'sqs:DeleteMessage',
          'sqs:ChangeMessageVisibility',
          'sqs:GetQueueAttributes',
          'sqs:GetQueueUrl',
        ],
        resources: PREVIEW_PREFIXES.map((prefix) =>
          stack.formatArn({ service: 'sqs', resource: prefix, arnFormat: ArnFormat.NO_RESOURCE_NAME }),
        ),
      }),
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        resources: [
          stack.formatArn({ service: 'secretsmanager', resource: 'secret', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
        ],
      }),
      new iam.PolicyStatement({
        actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey', 'kms:DescribeKey'],
        resources: arnsOf(stack, 'kms', 'key', ['*']),
      }),
      new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: ['*'] }),
      new iam.PolicyStatement({ actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], resources: ['*'] }),
    ],
  });
}

interface ContainmentInputs {
  granted: string[];
  boundary: iam.ManagedPolicy;
  qualifier: string;
  assetsBucket: string;
}

/** The first execution policy: reading the bundles, the bootstrap version, and IAM under the boundary. */
function containmentPolicy(stack: Stack, { granted, boundary, qualifier, assetsBucket }: ContainmentInputs): iam.ManagedPolicy {
  const roles = arnsOf(stack, 'iam', 'role', PREVIEW_PREFIXES, '');
  const withBoundary = { StringEquals: { 'iam:PermissionsBoundary': boundary.managedPolicyArn } };
  const iamActions = ofService(granted, 'iam');
  return new iam.ManagedPolicy(stack, 'PreviewExecution', {
    managedPolicyName: PREVIEW_EXECUTION_POLICY_NAME,
    description: 'CloudFormation execution policy of the preview account (cdk bootstrap --cloudformation-execution-policies): IAM, S3, SSM',
    statements: [
      // Lambda fetches a function's code from S3 with the credentials of whoever calls
      // CreateFunction or UpdateFunctionCode, here CloudFormation's role ("Your access has been
      // denied by S3, please make sure your request credentials have permission to GetObject").
      // The bucket's KMS key (new or AWS managed) lets account principals decrypt through S3 in
      // its key policy, so no kms: permission is needed for it.
      new iam.PolicyStatement({
        actions: ofService(granted, 's3'),
        resources: [stack.formatArn({ service: 's3', region: '', account: '', resource: assetsBucket, resourceName: '*' })],
      }),
      // The templates' BootstrapVersion parameter reads this SSM parameter.
      new iam.PolicyStatement({
        actions: ['ssm:GetParameters'],
        resources: arnsOf(stack, 'ssm', 'parameter', [`cdk-bootstrap/${qualifier}/version`]),
      }),
      // Roles: only preview-named ones, only created or given policies with the boundary on.
      new iam.PolicyStatement({
        actions: iamActions.filter((action) => BOUNDED_IAM_ACTIONS.includes(action)),
        resources: roles,
        conditions: withBoundary,
      }),
      new iam.PolicyStatement({
        actions: iamActions.filter((action) => !BOUNDED_IAM_ACTIONS.includes(action) && !SERVICE_LINKED_IAM_ACTIONS.includes(action)),
        resources: roles,
      }),
      // DynamoDB (replicas, auto scaling) and WAF (logging) create their service-linked roles,
      // whose policies AWS defines; they live under this path and nowhere else.
      new iam.PolicyStatement({
        actions: iamActions.filter((action) => SERVICE_LINKED_IAM_ACTIONS.includes(action)),
        resources: [stack.formatArn({ service: 'iam', region: '', resource: 'role', resourceName: 'aws-service-role/*' })],
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
}

// Every other service's actions on all resources: their names are generated by CloudFormation,
// so they cannot be scoped tighter than the account. One statement per service, packed into as
// few policies as IAM's size limit allows.
function servicesPolicies(stack: Stack, granted: string[]): iam.ManagedPolicy[] {
  const services = [...new Set(granted.map((action) => action.split(':')[0] ?? ''))].filter((s) => !['iam', 's3'].includes(s));
  const statements = services.map((service) => new iam.PolicyStatement({ actions: ofService(granted, service), resources: ['*'] }));
  return packedBySize(statements).map(
    (group, index) =>
      new iam.ManagedPolicy(stack, `PreviewExecutionServices${index + 1}`, {
        managedPolicyName: `${PREVIEW_SERVICES_POLICY_PREFIX}${index + 1}`,
        description: `CloudFormation execution policy of the preview account, part ${index + 2}: the actions of the stacks' resource types (lib/cdk/resource-handler-permissions.json)`,
        statements: group,
      }),
  );
}

/** The statements in order, in groups whose policy document fits MANAGED_POLICY_MAX_CHARACTERS. */
function packedBySize(statements: iam.PolicyStatement[]): iam.PolicyStatement[][] {
  const packed: iam.PolicyStatement[][] = [];
  const size = (group: iam.PolicyStatement[]) =>
    JSON.stringify({ Version: '2012-10-17', Statement: group.map((statement) => statement.toStatementJson() as unknown) }).length;
  for (const statement of statements) {
    const last = packed.at(-1);
    if (last && size([...last, statement]) <= MANAGED_POLICY_MAX_CHARACTERS) last.push(statement);
    else packed.push([statement]);
  }
  return packed;
}

// cdk-nag's IAM5 flags every wildcard; each is the point of these policies.
const CONTAINMENT_REASON =
  'A preview containment policy: actions of the resource types the preview stacks use, resources named after preview stacks, IAM only with the boundary (lib/cdk/preview-containment.ts).';

function literal(value: string, token: string): string {
  return Token.isUnresolved(value) ? token : value;
}

/** An ARN as cdk-nag writes it in a finding: literals where known, else the pseudo parameters. */
function findingArn(stack: Stack, service: string, region: string, resource: string): string {
  return `arn:${literal(stack.partition, '<AWS::Partition>')}:${service}:${region && literal(region, '<AWS::Region>')}:${literal(stack.account, '<AWS::AccountId>')}:${resource}`;
}

function acknowledgeBoundaryFindings(stack: Stack, boundary: iam.ManagedPolicy): void {
  const reason = CONTAINMENT_REASON;
  Validations.of(boundary).acknowledge(
    { id: 'AwsSolutions-IAM5[Action::dynamodb:*]', reason },
    { id: 'AwsSolutions-IAM5[Resource::*]', reason: 'Log streams, X-Ray segments and ListStreams have no narrower resource.' },
    ...PREVIEW_PREFIXES.flatMap((prefix) => [`table/${prefix}`, `table/${prefix}/index/*`]).map((resource) => ({
      id: `AwsSolutions-IAM5[Resource::${findingArn(stack, 'dynamodb', stack.region, resource)}]`,
      reason,
    })),
    ...PREVIEW_PREFIXES.map((prefix) => ({ id: `AwsSolutions-IAM5[Resource::${findingArn(stack, 'sqs', stack.region, prefix)}]`, reason })),
    {
      id: `AwsSolutions-IAM5[Resource::${findingArn(stack, 'secretsmanager', stack.region, 'secret:*')}]`,
      reason: "Secrets of the preview account: CloudFormation's generated secret names do not carry the stack's name.",
    },
    {
      id: `AwsSolutions-IAM5[Resource::${findingArn(stack, 'kms', stack.region, 'key/*')}]`,
      reason: 'Keys of the preview account (key ids are generated).',
    },
  );
}

function acknowledgeExecutionFindings(
  stack: Stack,
  policies: iam.ManagedPolicy[],
  { granted, assetsBucket }: { granted: string[]; assetsBucket: string },
): void {
  const reason = CONTAINMENT_REASON;
  const wildcardActions = granted.filter((action) => action.includes('*'));
  for (const policy of policies) {
    Validations.of(policy).acknowledge(
      ...wildcardActions.map((action) => ({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason: 'The action as the resource type schema lists it.',
      })),
      { id: 'AwsSolutions-IAM5[Resource::*]', reason },
      {
        id: `AwsSolutions-IAM5[Resource::arn:${literal(stack.partition, '<AWS::Partition>')}:s3:::${assetsBucket}/*]`,
        reason: "The function bundles in the CDK bootstrap's assets bucket (names are content hashes).",
      },
      {
        id: `AwsSolutions-IAM5[Resource::${findingArn(stack, 'iam', '', 'role/aws-service-role/*')}]`,
        reason: 'Service-linked roles, whose policies AWS defines.',
      },
      ...PREVIEW_PREFIXES.map((prefix) => ({
        id: `AwsSolutions-IAM5[Resource::${findingArn(stack, 'iam', '', `role/${prefix}`)}]`,
        reason,
      })),
    );
  }
}

/** Every role of a preview stack gets the boundary (the execution policy refuses roles without it). */
export function applyPreviewBoundary(stack: Stack, scope: Construct = stack): void {
  iam.PermissionsBoundary.of(scope).apply(iam.ManagedPolicy.fromManagedPolicyName(stack, 'PreviewBoundary', PREVIEW_BOUNDARY_NAME));
}
