// The preview account's CloudFormation execution policies (lib/cdk/preview-containment.ts) must
// let CloudFormation deploy and delete what the stacks' templates hold, and nothing more. What
// CloudFormation calls is what AWS's resource provider schemas list in their handlers (create,
// read, update, delete, tagging), kept in lib/cdk/resource-handler-permissions.json with their
// source; the resource types come from the synthesized production and preview templates. Only
// AWS can show a deploy succeeding: docs/DEPLOY.md ("Contain the preview account") names the pages
// this relies on.
import { readFileSync } from 'node:fs';
import {
  handlerActions,
  MANAGED_POLICY_MAX_CHARACTERS,
  PREVIEW_BOUNDARY_NAME,
  PREVIEW_EXECUTION_POLICY_NAME,
  PREVIEW_SERVICES_POLICY_PREFIX,
  RESOURCE_HANDLER_PERMISSIONS,
  WITHHELD_ACTIONS,
  withheld,
} from '../../lib/cdk/preview-containment.ts';
import { resourcesOfType, synthesize, TEST_REGION, type Synthesized } from './synthesize.ts';

const PREVIEW_ACCOUNT = '222222222222';
const CI = { githubRepository: 'museum/special-events-api', productionAccount: '111111111111', previewAccount: PREVIEW_ACCOUNT };
/**
 * Resource types the stacks gain in this round of work (the credential key, the webhook queues,
 * their key, the stream consumer), covered before they reach the templates. Once every one of
 * them is in a synthesized template, this list can go.
 */
const ARRIVING_TYPES = [
  'AWS::SecretsManager::Secret',
  'AWS::SQS::Queue',
  'AWS::SQS::QueuePolicy',
  'AWS::KMS::Key',
  'AWS::KMS::Alias',
  'AWS::Lambda::EventSourceMapping',
];

let preview: Synthesized;
let configurations: Record<string, Synthesized>;
beforeAll(() => {
  preview = synthesize({ stage: 'pr-7', ...CI });
  configurations = {
    preview,
    production: synthesize({ alarmEmail: 'ops@museum.example' }),
    'production with a custom domain': synthesize({
      alarmEmail: 'ops@museum.example',
      domainName: 'api.museum.example',
      certificateArn: `arn:aws:acm:${TEST_REGION}:123456789012:certificate/abc`,
    }),
    'production with a restored table attached': synthesize({
      alarmEmail: 'ops@museum.example',
      eventsTableName: 'MuseumApi-prod-TablesEvents-restored-20261124',
      eventsTableStreamArn:
        'arn:aws:dynamodb:eu-west-1:123456789012:table/MuseumApi-prod-TablesEvents-restored-20261124/stream/2026-11-24T10:00:00.000',
    }),
  };
});

/** Resource type -> where it occurs ("production MuseumApi-prod"), over every configuration's API and mock templates. */
function templateTypes(): Map<string, string[]> {
  const types = new Map<string, string[]>();
  for (const [name, app] of Object.entries(configurations)) {
    for (const stack of [app.api, app.mock]) {
      const json = stack.template.toJSON() as { Resources: Record<string, { Type: string }> };
      for (const { Type } of Object.values(json.Resources)) types.set(Type, [...(types.get(Type) ?? []), `${name} ${stack.stackName}`]);
    }
  }
  return types;
}

interface Statement {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

function managedPolicies(): { name: string; document: { Statement: Statement[] } }[] {
  const stack = preview.ci.find((s) => s.stackName === 'MuseumCiIdentities-preview')!;
  return Object.values(resourcesOfType(stack.template, 'AWS::IAM::ManagedPolicy')).map((policy) => ({
    name: policy.Properties?.ManagedPolicyName as string,
    document: policy.Properties?.PolicyDocument as { Statement: Statement[] },
  }));
}

function executionPolicies() {
  return managedPolicies().filter((policy) => policy.name !== PREVIEW_BOUNDARY_NAME);
}

const allows = () => executionPolicies().flatMap((policy) => policy.document.Statement.filter((s) => s.Effect === 'Allow'));
const actionsOf = (statement: Statement) => [statement.Action].flat();

/** IAM's action wildcards: `*` any run of characters, `?` one character, case-insensitive. */
function covers(pattern: string, action: string): boolean {
  const source = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 'i').test(action);
}

/** Resolves the template's Fn::Join/Ref of pseudo parameters and the boundary's ARN to text. */
function resolved(value: unknown): string {
  return JSON.stringify(value, (_key, part: unknown) => {
    if (part && typeof part === 'object' && 'Fn::Join' in part) {
      const [separator, parts] = (part as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
      return parts.map((p) => JSON.parse(resolved(p)) as string).join(separator);
    }
    if (part && typeof part === 'object' && 'Ref' in part) {
      const ref = (part as { Ref: string }).Ref;
      return (
        { 'AWS::Partition': 'aws', 'AWS::Region': TEST_REGION, 'AWS::AccountId': PREVIEW_ACCOUNT }[ref] ??
        `arn:aws:iam::${PREVIEW_ACCOUNT}:policy/${ref}`
      );
    }
    return part;
  });
}

test('every resource type of the production and preview templates has its resource provider schema permissions in the repository', () => {
  const missing = [...templateTypes()]
    .filter(([type]) => !RESOURCE_HANDLER_PERMISSIONS[type])
    .map(
      ([type, where]) =>
        `${type} (in ${where.join(', ')}) has no entry in lib/cdk/resource-handler-permissions.json: add it with scripts/resource-handler-permissions.ts`,
    );
  expect(missing).toEqual([]);
  for (const [type, permissions] of Object.entries(RESOURCE_HANDLER_PERMISSIONS)) {
    expect(permissions.schema).toBe(`aws-cloudformation-schema/${type.toLowerCase().replaceAll('::', '-')}.json`);
    expect(permissions.create.length * permissions.delete.length).toBeGreaterThan(0);
  }
  const source = (
    JSON.parse(readFileSync(new URL('../../lib/cdk/resource-handler-permissions.json', import.meta.url), 'utf8')) as { source: string }
  ).source;
  expect(source).toMatch(
    /^AWS CloudFormation registry resource provider schemas .* https:\/\/github\.com\/pulumi\/pulumi-aws-native at commit [0-9a-f]{40}/,
  );
});

test('the repository keeps the permissions of exactly the types the templates hold, and of the types arriving this round', () => {
  const kept = Object.keys(RESOURCE_HANDLER_PERMISSIONS).sort();
  expect(kept).toEqual([...new Set([...templateTypes().keys(), ...ARRIVING_TYPES])].sort());
});

test("the execution policies grant every action the templates' resource types' handlers list, except the ones withheld on purpose", () => {
  const granted = allows().flatMap(actionsOf);
  const needed = [...handlerActions([...templateTypes().keys(), ...ARRIVING_TYPES])];
  const missing = needed.filter((action) => !withheld(action) && !granted.some((pattern) => covers(pattern, action)));
  expect(missing).toEqual([]);
  // What the schemas showed missing from the policy before it was derived from them.
  for (const action of [
    'application-autoscaling:DeleteScalingPolicy',
    'application-autoscaling:DeleteScheduledAction',
    'application-autoscaling:DeregisterScalableTarget',
    'application-autoscaling:Describe*',
    'application-autoscaling:PutScalingPolicy',
    'application-autoscaling:PutScheduledAction',
    'application-autoscaling:RegisterScalableTarget',
    'iam:CreateServiceLinkedRole',
    'kms:CreateGrant',
    'kms:DescribeKey',
    'iam:ListRolePolicies',
    'iam:ListAttachedRolePolicies',
  ]) {
    expect(granted).toContain(action);
  }
  // A withheld action is granted nowhere, and every withholding rule still applies to some schema action.
  for (const action of needed.filter((a) => withheld(a))) expect(granted.filter((pattern) => covers(pattern, action))).toEqual([]);
  for (const rule of WITHHELD_ACTIONS) expect(needed.filter((action) => rule.actions.test(action)).length).toBeGreaterThan(0);
});

test('nothing is granted beyond those actions: no service wildcard, IAM on preview roles, S3 on the assets bucket', () => {
  const needed = handlerActions([...templateTypes().keys(), ...ARRIVING_TYPES]);
  const extra = allows()
    .flatMap(actionsOf)
    .filter((action) => !needed.has(action));
  // The templates' BootstrapVersion parameter (an SSM parameter type) is resolved with CloudFormation's role.
  expect(extra).toEqual(['ssm:GetParameters']);
  for (const statement of allows()) {
    const resource = resolved(statement.Resource);
    for (const action of actionsOf(statement)) {
      expect(action).not.toMatch(/^([\w-]+:)?\*$/);
      if (action === 'iam:CreateServiceLinkedRole') expect(resource).toBe(`"arn:aws:iam::${PREVIEW_ACCOUNT}:role/aws-service-role/*"`);
      else if (action.startsWith('iam:'))
        expect(JSON.parse(resource)).toEqual([
          `arn:aws:iam::${PREVIEW_ACCOUNT}:role/MuseumApi-pr-*`,
          `arn:aws:iam::${PREVIEW_ACCOUNT}:role/MuseumMockApi-pr-*`,
        ]);
      else if (action.startsWith('s3:')) expect(resource).toBe(`"arn:aws:s3:::cdk-hnb659fds-assets-${PREVIEW_ACCOUNT}-${TEST_REGION}/*"`);
    }
  }
  // Roles are created or given policies only with the boundary on.
  const bounded = allows().filter((s) =>
    actionsOf(s).some((a) => ['iam:CreateRole', 'iam:PutRolePolicy', 'iam:AttachRolePolicy'].includes(a)),
  );
  expect(bounded.flatMap(actionsOf).sort()).toEqual(['iam:AttachRolePolicy', 'iam:CreateRole', 'iam:PutRolePolicy']);
  expect(resolved(bounded.map((s) => s.Condition))).toContain('iam:PermissionsBoundary');
});

test("the bundles are read from the preview account's own CDK assets bucket, nothing else in S3", () => {
  const buckets = new Set<string>();
  for (const stack of [preview.api, preview.mock]) {
    for (const fn of Object.values(resourcesOfType(stack.template, 'AWS::Lambda::Function'))) {
      const bucket = (fn.Properties?.Code as { S3Bucket: { 'Fn::Sub': string } }).S3Bucket['Fn::Sub'];
      buckets.add(bucket.replace('${AWS::AccountId}', PREVIEW_ACCOUNT).replace('${AWS::Region}', TEST_REGION));
    }
  }
  expect([...buckets]).toEqual([`cdk-hnb659fds-assets-${PREVIEW_ACCOUNT}-${TEST_REGION}`]);
  const s3 = allows().filter((s) => actionsOf(s).some((a) => a.startsWith('s3:')));
  expect(s3).toEqual([
    { Effect: 'Allow', Action: ['s3:GetObject', 's3:GetObjectVersion'], Resource: `arn:aws:s3:::${[...buckets][0]!}/*` },
  ]);
});

test("each execution policy fits IAM's managed policy size, and the bootstrap command in docs/DEPLOY.md names all of them", () => {
  const names = executionPolicies().map((policy) => policy.name);
  expect(names[0]).toBe(PREVIEW_EXECUTION_POLICY_NAME);
  expect(names.slice(1)).toEqual(names.slice(1).map((_, index) => `${PREVIEW_SERVICES_POLICY_PREFIX}${index + 1}`));
  for (const policy of executionPolicies()) {
    expect(resolved({ Version: '2012-10-17', ...policy.document }).replace(/\s/g, '').length).toBeLessThanOrEqual(
      MANAGED_POLICY_MAX_CHARACTERS,
    );
  }
  const guide = readFileSync(new URL('../../docs/DEPLOY.md', import.meta.url), 'utf8');
  const command = guide
    .split('\n')
    .find((line) => line.startsWith(`npx cdk bootstrap aws://${PREVIEW_ACCOUNT}/`) && line.includes(PREVIEW_EXECUTION_POLICY_NAME));
  expect(command?.split('--cloudformation-execution-policies ')[1]?.split(',')).toEqual(
    names.map((name) => `arn:aws:iam::${PREVIEW_ACCOUNT}:policy/${name}`),
  );
});
