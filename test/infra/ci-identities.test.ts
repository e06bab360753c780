// The CI identities (lib/cdk/ci-identities-stack.ts): who can assume each role (the GitHub OIDC
// token's audience and subject) and what it can then do. Previews live in their own account, so
// no role a pull request can assume exists in the production account.
import { CI_ROLE_NAMES, readCiIdentitiesConfig } from '../../lib/cdk/ci-identities-stack.ts';
import { PREVIEW_BOUNDARY_NAME, PREVIEW_EXECUTION_POLICY_NAME, PREVIEW_SERVICES_POLICY_PREFIX } from '../../lib/cdk/preview-containment.ts';
import { releaseHistoryPath } from '../../lib/cdk/canary-releases.ts';
import { resourcesOfType, synthesize, TEST_REGION, type Synthesized } from './synthesize.ts';

const REPOSITORY = 'museum/special-events-api';
const PRODUCTION_ACCOUNT = '111111111111';
const PREVIEW_ACCOUNT = '222222222222';

let app: Synthesized;
beforeAll(() => {
  app = synthesize({ githubRepository: REPOSITORY, productionAccount: PRODUCTION_ACCOUNT, previewAccount: PREVIEW_ACCOUNT });
});

interface Statement {
  Action: string | string[];
  Effect: string;
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
  Principal?: unknown;
}

function rolesOf(kind: 'production' | 'preview') {
  const stack = app.ci.find((s) => s.stackName === `MuseumCiIdentities-${kind}`)!;
  const template = stack.template;
  const policies = Object.values(resourcesOfType(template, 'AWS::IAM::Policy'));
  return {
    stack,
    template,
    roles: Object.entries(resourcesOfType(template, 'AWS::IAM::Role')).map(([id, role]) => {
      const properties = role.Properties as { RoleName: string; AssumeRolePolicyDocument: { Statement: Statement[] } };
      const statements = policies
        .filter((policy) => JSON.stringify(policy.Properties?.Roles) === JSON.stringify([{ Ref: id }]))
        .flatMap((policy) => (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement);
      return { name: properties.RoleName, trust: properties.AssumeRolePolicyDocument.Statement, statements };
    }),
  };
}

const actions = (statement: Statement) => [statement.Action].flat();
const subjectOf = (trust: Statement[]) =>
  trust.map((statement) => statement.Condition?.StringEquals?.['token.actions.githubusercontent.com:sub']);

test('without githubRepository the app has no CI stacks; with it, one per account, and the two accounts must differ', () => {
  const context = (values: Record<string, string>) => ({ tryGetContext: (key: string) => values[key] });
  expect(readCiIdentitiesConfig(context({}))).toBeUndefined();
  expect(app.ci.map((stack) => [stack.stackName, stack.account])).toEqual([
    ['MuseumCiIdentities-production', PRODUCTION_ACCOUNT],
    ['MuseumCiIdentities-preview', PREVIEW_ACCOUNT],
  ]);
  expect(() =>
    readCiIdentitiesConfig(
      context({ githubRepository: REPOSITORY, productionAccount: PRODUCTION_ACCOUNT, previewAccount: PRODUCTION_ACCOUNT }),
    ),
  ).toThrow(/previewAccount/);
  expect(() =>
    readCiIdentitiesConfig(
      context({ githubRepository: 'not a repo', productionAccount: PRODUCTION_ACCOUNT, previewAccount: PREVIEW_ACCOUNT }),
    ),
  ).toThrow(/owner\/name/);
  expect(() => readCiIdentitiesConfig(context({ githubRepository: REPOSITORY, productionAccount: '1' }))).toThrow(/12-digit/);
});

test('every role trusts only GitHub tokens for this repository with the STS audience, and exactly one subject', () => {
  for (const kind of ['production', 'preview'] as const) {
    const { roles, template } = rolesOf(kind);
    template.hasResourceProperties('AWS::IAM::OIDCProvider', {
      Url: 'https://token.actions.githubusercontent.com',
      ClientIdList: ['sts.amazonaws.com'],
    });
    for (const role of roles) {
      expect(role.trust).toHaveLength(1);
      const [trust] = role.trust;
      expect(trust).toMatchObject({ Effect: 'Allow', Action: 'sts:AssumeRoleWithWebIdentity' });
      expect(Object.keys(trust!.Condition!)).toEqual(['StringEquals']); // no StringLike wildcards
      expect(trust!.Condition!.StringEquals).toEqual({
        'token.actions.githubusercontent.com:aud': 'sts.amazonaws.com',
        'token.actions.githubusercontent.com:sub': expect.stringMatching(new RegExp(`^repo:${REPOSITORY}:`)),
      });
    }
  }
});

test('the production account trusts the production environment (deploy) and pushes to main (read-only diff), never a pull request', () => {
  const { roles } = rolesOf('production');
  expect(Object.fromEntries(roles.map((role) => [role.name, subjectOf(role.trust)]))).toEqual({
    [CI_ROLE_NAMES.production]: [`repo:${REPOSITORY}:environment:production`],
    [CI_ROLE_NAMES.diff]: [`repo:${REPOSITORY}:ref:refs/heads/main`],
  });
  expect(JSON.stringify(roles)).not.toContain('pull_request');
});

test('the preview account trusts pull requests to deploy and main to clean up, and the preview role is not in the production account', () => {
  const { roles } = rolesOf('preview');
  expect(Object.fromEntries(roles.map((role) => [role.name, subjectOf(role.trust)]))).toEqual({
    [CI_ROLE_NAMES.preview]: [`repo:${REPOSITORY}:pull_request`],
    [CI_ROLE_NAMES.previewCleanup]: [`repo:${REPOSITORY}:ref:refs/heads/main`],
  });
  // The cleanup role can list stacks and delete previews, nothing else.
  const cleanup = roles.find((role) => role.name === CI_ROLE_NAMES.previewCleanup)!;
  expect(cleanup.statements.flatMap(actions).sort()).toEqual(['cloudformation:DeleteStack', 'cloudformation:DescribeStacks']);
  const deletable = JSON.stringify(
    cleanup.statements.filter((s) => actions(s).includes('cloudformation:DeleteStack')).map((s) => s.Resource),
  );
  expect(deletable).toContain(`:${PREVIEW_ACCOUNT}:stack/MuseumApi-pr-*/*`);
  expect(deletable).not.toContain('-prod');
  expect(JSON.stringify(roles)).not.toContain('environment:production');
});

test('the production deploy role can only assume the CDK bootstrap roles of the production account, and add records to the release history', () => {
  const deploy = rolesOf('production').roles.find((role) => role.name === CI_ROLE_NAMES.production)!;
  const allowed = deploy.statements.filter((statement) => statement.Effect === 'Allow');
  expect(allowed.flatMap(actions).sort()).toEqual(['ssm:PutParameter', 'sts:AssumeRole', 'sts:TagSession']);
  // The release history bin/rollback.sh reads: new parameters under its path, written only, never overwritten.
  const history = `:ssm:${TEST_REGION}:${PRODUCTION_ACCOUNT}:parameter${releaseHistoryPath('prod')}/*"`;
  const record = allowed.find((statement) => actions(statement).includes('ssm:PutParameter'))!;
  expect(actions(record)).toEqual(['ssm:PutParameter']);
  expect(JSON.stringify(record.Resource)).toContain(history);
  const denied = deploy.statements.filter((statement) => statement.Effect === 'Deny');
  expect(denied).toHaveLength(1);
  expect(denied[0]).toMatchObject({ Action: 'ssm:PutParameter', Condition: { StringEquals: { 'ssm:Overwrite': 'true' } } });
  expect(JSON.stringify(denied[0]!.Resource)).toContain(history);
  const resources = JSON.stringify(allowed.filter((statement) => statement !== record).map((statement) => statement.Resource));
  for (const role of ['deploy-role', 'file-publishing-role', 'image-publishing-role', 'lookup-role']) {
    expect(resources).toContain(`:iam::${PRODUCTION_ACCOUNT}:role/cdk-hnb659fds-${role}-${PRODUCTION_ACCOUNT}-`);
  }
  expect(resources).not.toContain(PREVIEW_ACCOUNT);
  expect(resources).not.toContain('*');
});

test("the diff identity can only read the production stacks' templates", () => {
  const diff = rolesOf('production').roles.find((role) => role.name === CI_ROLE_NAMES.diff)!;
  expect(diff.statements.flatMap(actions).sort()).toEqual(['cloudformation:DescribeStacks', 'cloudformation:GetTemplate']);
  const resources = JSON.stringify(diff.statements.map((statement) => statement.Resource));
  for (const stack of ['MuseumApi-prod', 'MuseumMockApi-prod', 'MuseumApiGatewayAccount']) expect(resources).toContain(`:stack/${stack}/*`);
  expect(resources).not.toMatch(/sts:|iam:/);
});

test('the preview role can reach only the preview account: its bootstrap roles, and deleting pull-request stacks', () => {
  const preview = rolesOf('preview').roles.find((role) => role.name === CI_ROLE_NAMES.preview)!;
  expect(preview.statements.flatMap(actions).sort()).toEqual([
    'cloudformation:DeleteStack',
    'cloudformation:DescribeStacks',
    'dynamodb:DeleteItem',
    'dynamodb:PutItem',
    'secretsmanager:GetSecretValue',
    'sts:AssumeRole',
    'sts:TagSession',
  ]);
  // The smoke test's temporary user: preview tables, users' items and directory only, with the previews' credential keys.
  const users = preview.statements.find((s) => actions(s).includes('dynamodb:PutItem')) as unknown as {
    Resource: unknown;
    Condition: unknown;
  };
  expect(JSON.stringify(users.Resource)).toContain(`:${PREVIEW_ACCOUNT}:table/MuseumApi-pr-*`);
  expect(users.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['USERS', 'USER#*'] } });
  const secret = preview.statements.find((s) => actions(s).includes('secretsmanager:GetSecretValue')) as unknown as { Resource: unknown };
  expect(JSON.stringify(secret.Resource)).toContain(`:${PREVIEW_ACCOUNT}:secret:MuseumApi-pr-*-credential-keys-*`);
  const resources = JSON.stringify(preview.statements.map((statement) => statement.Resource));
  expect(resources).not.toContain(PRODUCTION_ACCOUNT);
  const stackResources = preview.statements
    .filter((s) => actions(s).includes('cloudformation:DeleteStack'))
    .map((s) => JSON.stringify(s.Resource));
  expect(stackResources.join()).toContain(`:${PREVIEW_ACCOUNT}:stack/MuseumApi-pr-*/*`);
  expect(stackResources.join()).toContain(`:${PREVIEW_ACCOUNT}:stack/MuseumMockApi-pr-*/*`);
  expect(stackResources.join()).not.toContain('-prod');
  // No image publishing: the app has no container assets.
  expect(resources).not.toContain('image-publishing-role');
});

test('the CI stacks are termination-protected and pass cdk-nag with nothing unacknowledged', () => {
  for (const stack of app.ci) expect(stack.terminationProtection).toBe(true);
  expect(app.nagViolations).toEqual([]);
});

test('the preview account gets a CloudFormation execution policy without a way out through IAM, and a boundary for the roles previews create', () => {
  const managed = (kind: 'production' | 'preview') =>
    Object.values(resourcesOfType(rolesOf(kind).template, 'AWS::IAM::ManagedPolicy')).map(
      (policy) => policy.Properties as { ManagedPolicyName: string; PolicyDocument: { Statement: Statement[] } },
    );
  expect(managed('production')).toEqual([]);
  const policies = Object.fromEntries(managed('preview').map((policy) => [policy.ManagedPolicyName, policy.PolicyDocument.Statement]));
  expect(Object.keys(policies)).toEqual(
    expect.arrayContaining([PREVIEW_BOUNDARY_NAME, PREVIEW_EXECUTION_POLICY_NAME, `${PREVIEW_SERVICES_POLICY_PREFIX}1`]),
  );
  const execution = Object.entries(policies)
    .filter(([name]) => name !== PREVIEW_BOUNDARY_NAME)
    .flatMap(([, statements]) => statements);
  // No iam:* and no administrator: IAM actions only on preview-named roles (and AWS's service-linked roles)...
  for (const statement of execution) {
    for (const action of actions(statement)) {
      expect(action).not.toMatch(/^(\*|iam:\*)$/);
      if (action.startsWith('iam:') && statement.Effect !== 'Deny' && action !== 'iam:CreateServiceLinkedRole')
        expect(JSON.stringify(statement.Resource)).toMatch(/role\/Museum(Mock)?Api-pr-\*/);
    }
  }
  // ...a role can be created or given a policy only with the boundary attached, never lose it.
  const create = execution.find((statement) => actions(statement).includes('iam:CreateRole'))!;
  expect(actions(create).sort()).toEqual(['iam:AttachRolePolicy', 'iam:CreateRole', 'iam:PutRolePolicy']);
  expect(JSON.stringify(create.Condition)).toContain('iam:PermissionsBoundary');
  const denied = execution.find((statement) => statement.Effect === 'Deny')!;
  expect(actions(denied)).toEqual(
    expect.arrayContaining(['iam:DeleteRolePermissionsBoundary', 'iam:PutRolePermissionsBoundary', 'iam:CreateUser']),
  );
  // The boundary: the handlers' needs, on preview tables.
  const boundary = policies[PREVIEW_BOUNDARY_NAME]!;
  expect(boundary.flatMap(actions).sort()).toEqual(
    [
      'dynamodb:*',
      'dynamodb:ListStreams',
      'kms:Decrypt',
      'kms:DescribeKey',
      'kms:Encrypt',
      'kms:GenerateDataKey',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'secretsmanager:DescribeSecret',
      'secretsmanager:GetSecretValue',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ].sort(),
  );
  // Tables and queues of previews only; secrets and keys of the preview account only.
  const resourcesOf = (prefix: string) =>
    JSON.stringify(boundary.filter((statement) => actions(statement).some((action) => action.startsWith(prefix))).map((s) => s.Resource));
  expect(resourcesOf('dynamodb:*')).toContain(`:${PREVIEW_ACCOUNT}:table/MuseumApi-pr-*`);
  expect(JSON.parse(resourcesOf('sqs:'))).toEqual([
    [`arn:aws:sqs:${TEST_REGION}:${PREVIEW_ACCOUNT}:MuseumApi-pr-*`, `arn:aws:sqs:${TEST_REGION}:${PREVIEW_ACCOUNT}:MuseumMockApi-pr-*`],
  ]);
  expect(resourcesOf('secretsmanager:')).toContain(`:${PREVIEW_ACCOUNT}:secret:*`);
  expect(resourcesOf('kms:')).toContain(`:${PREVIEW_ACCOUNT}:key/*`);
});
