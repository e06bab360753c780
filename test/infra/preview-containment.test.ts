// The preview account's CloudFormation execution policy (lib/cdk/preview-containment.ts) must let
// CloudFormation create what a preview's templates hold, and nothing more: the actions are derived
// here from the resource types of the preview templates CI deploys, and compared both ways.
import { Template } from 'aws-cdk-lib/assertions';
import { PREVIEW_EXECUTION_POLICY_NAME } from '../../lib/cdk/preview-containment.ts';
import { resourcesOfType, synthesize, TEST_REGION, type Synthesized } from './synthesize.ts';

const PREVIEW_ACCOUNT = '222222222222';

let app: Synthesized;
beforeAll(() => {
  app = synthesize({
    stage: 'pr-7',
    githubRepository: 'museum/special-events-api',
    productionAccount: '111111111111',
    previewAccount: PREVIEW_ACCOUNT,
  });
});

/**
 * What CloudFormation's role needs per resource type of a preview template. IAM is not here: its
 * own statements confine it to preview-named roles with the boundary (ci-identities.test.ts).
 * AWS::CDK::Metadata is recorded by CloudFormation itself and calls no service.
 */
const SERVICE_OF = (type: string): string | undefined =>
  ({ ApiGateway: 'apigateway', Lambda: 'lambda', DynamoDB: 'dynamodb', Logs: 'logs', IAM: 'iam', CDK: '' })[type.split('::')[1] ?? ''];

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

function executionPolicy(): Statement[] {
  const stack = app.ci.find((s) => s.stackName === 'MuseumCiIdentities-preview')!;
  const policy = Object.values(resourcesOfType(Template.fromStack(stack), 'AWS::IAM::ManagedPolicy')).find(
    (p) => p.Properties?.ManagedPolicyName === PREVIEW_EXECUTION_POLICY_NAME,
  )!;
  return (policy.Properties?.PolicyDocument as { Statement: Statement[] }).Statement;
}

/** The actions (outside IAM) and resources a deploy of the preview templates needs from CloudFormation's role. */
function needed(): Map<string, string[]> {
  const needs = new Map<string, string[]>();
  for (const template of [app.apiTemplate, app.mockTemplate]) {
    const json = template.toJSON() as {
      Resources: Record<string, { Type: string; Properties?: any }>;
      Parameters?: Record<string, { Type: string; Default?: string }>;
    };
    for (const resource of Object.values(json.Resources)) {
      const service = SERVICE_OF(resource.Type);
      if (service === undefined)
        throw new Error(
          `A preview template holds ${resource.Type}: decide what CloudFormation needs for it, in the execution policy and here`,
        );
      if (service && service !== 'iam') needs.set(`${service}:*`, ['*']);
      // A function's code is an object in the bootstrap's assets bucket, fetched with CloudFormation's credentials.
      const bucket = resource.Type === 'AWS::Lambda::Function' ? resource.Properties?.Code?.S3Bucket : undefined;
      if (bucket) {
        const name = String(bucket['Fn::Sub'] ?? bucket)
          .replace('${AWS::AccountId}', PREVIEW_ACCOUNT)
          .replace('${AWS::Region}', TEST_REGION);
        needs.set('s3:GetObject', [`arn:aws:s3:::${name}/*`]);
      }
    }
    for (const parameter of Object.values(json.Parameters ?? {})) {
      if (parameter.Type.startsWith('AWS::SSM::Parameter::Value')) {
        needs.set('ssm:GetParameters', [`arn:aws:ssm:${TEST_REGION}:${PREVIEW_ACCOUNT}:parameter${parameter.Default ?? ''}`]);
      }
    }
  }
  return needs;
}

test('the execution policy allows exactly the services and objects a preview deploy of the templates needs, none account-wide beyond their services', () => {
  const needs = needed();
  expect([...needs.keys()].sort()).toEqual(['apigateway:*', 'dynamodb:*', 'lambda:*', 'logs:*', 's3:GetObject', 'ssm:GetParameters']);
  const allowed = new Map<string, string[]>();
  for (const statement of executionPolicy().filter((s) => s.Effect === 'Allow')) {
    for (const action of [statement.Action].flat().filter((a) => !a.startsWith('iam:'))) {
      allowed.set(
        action,
        [statement.Resource].flat().map((resource) => JSON.stringify(resource).replace(/^"|"$/g, '')),
      );
    }
  }
  expect(Object.fromEntries([...allowed].sort())).toEqual(Object.fromEntries([...needs].sort()));
});

test("the bundles are read from the preview account's own CDK assets bucket, nothing else in S3", () => {
  const s3 = executionPolicy().filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:')));
  expect(s3).toEqual([
    { Effect: 'Allow', Action: 's3:GetObject', Resource: `arn:aws:s3:::cdk-hnb659fds-assets-${PREVIEW_ACCOUNT}-${TEST_REGION}/*` },
  ]);
});
