// The identities GitHub Actions uses, as code: GitHub's OIDC provider and one role per job kind,
// each trusted for exactly one kind of workflow run (the token's `sub` claim) and able to do only
// that job. Deployed once by an administrator, never by CI (docs/DEPLOY.md, "CI identities"):
//
//   npx cdk deploy MuseumCiIdentities-production MuseumCiIdentities-preview \
//     -c githubRepository=<owner>/<repo> -c productionAccount=<id> -c previewAccount=<id>
//
// Previews live in a separate AWS account (AWS's recommendation for untrusted changes): a pull
// request's job runs the branch's own workflow file, so whatever role it can assume, anyone who
// can push a branch can use. The preview role exists only in the preview account and trusts
// only pull_request tokens; no role in the production account trusts them. So a compromised
// branch can at worst change or delete other previews.
import { ArnFormat, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct, Node } from 'constructs';
import { API_GATEWAY_ACCOUNT_STACK_NAME } from './api-gateway-account-stack.ts';
import { keys } from '../../functions/store/table-definition.ts';
import { releaseHistoryPath } from './canary-releases.ts';
import { bootstrapRoleArns, stackArn, stackArnForFindings, tableArnForFindings } from './ci-identity-arns.ts';
import { addPreviewContainment } from './preview-containment.ts';
import { PRODUCTION_STAGE } from './stage-config.ts';

export const GITHUB_OIDC_ISSUER = 'token.actions.githubusercontent.com';
export const PRODUCTION_ENVIRONMENT = 'production';

/** Role names (fixed, so the workflow variables can be written down before the first deploy). */
export const CI_ROLE_NAMES = {
  production: 'museum-github-production-deploy',
  diff: 'museum-github-production-diff',
  preview: 'museum-github-preview-deploy',
  previewCleanup: 'museum-github-preview-cleanup',
} as const;

/** Stacks a preview creates; the preview role may delete these and nothing else directly. */
export const PREVIEW_STACK_PATTERNS = ['MuseumApi-pr-*', 'MuseumMockApi-pr-*'];
/** Tables of preview stacks (CloudFormation names them after the stack). */
export const PREVIEW_TABLE_PATTERN = 'MuseumApi-pr-*';
/** The previews' credential keys (`<stack>-credential-keys`, then Secrets Manager's random suffix). */
export const PREVIEW_SECRET_PATTERN = 'MuseumApi-pr-*-credential-keys-*';
/** Production stacks the read-only diff identity may read. */
export const PRODUCTION_STACK_NAMES = [
  `MuseumApi-${PRODUCTION_STAGE}`,
  `MuseumMockApi-${PRODUCTION_STAGE}`,
  API_GATEWAY_ACCOUNT_STACK_NAME,
];

export interface CiIdentitiesConfig {
  /** `owner/name` of the GitHub repository. */
  repository: string;
  productionAccount: string;
  previewAccount: string;
  /** An existing GitHub OIDC provider of each account (an account holds at most one per URL). */
  existingProviderArns: { production?: string; preview?: string };
}

type Context = Pick<Node, 'tryGetContext'>;

/** Read from context; undefined unless `githubRepository` is given (the CI stacks are then part of the app). */
export function readCiIdentitiesConfig(node: Context): CiIdentitiesConfig | undefined {
  const value = (key: string): string | undefined => {
    const raw: unknown = node.tryGetContext(key);
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a CDK context value (-c or cdk.json): any JSON at runtime, taken as text
    return raw === undefined || raw === null || raw === '' ? undefined : String(raw);
  };
  const repository = value('githubRepository');
  if (!repository) return undefined;
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository))
    throw new Error(`Context "githubRepository" must be owner/name, not "${repository}"`);
  const productionAccount = value('productionAccount');
  const previewAccount = value('previewAccount');
  for (const [key, account] of [
    ['productionAccount', productionAccount],
    ['previewAccount', previewAccount],
  ] as const) {
    if (!account || !/^\d{12}$/.test(account)) throw new Error(`Context "${key}" must be a 12-digit AWS account id`);
  }
  if (productionAccount === previewAccount) {
    throw new Error(
      'Context "previewAccount" must differ from "productionAccount": pull requests deploy from their own workflow files, so previews get an account of their own',
    );
  }
  const production = value('productionOidcProviderArn');
  const preview = value('previewOidcProviderArn');
  return {
    repository,
    productionAccount: productionAccount as string,
    previewAccount: previewAccount as string,
    existingProviderArns: { ...(production ? { production } : {}), ...(preview ? { preview } : {}) },
  };
}

export interface CiIdentitiesStackProps extends StackProps {
  config: CiIdentitiesConfig;
  /** Which account this stack is for. */
  kind: 'production' | 'preview';
}

/** Who a role trusts: GitHub's OIDC provider, for tokens of this repository. */
interface Trust {
  provider: iam.IOidcProvider;
  config: CiIdentitiesConfig;
}

export class CiIdentitiesStack extends Stack {
  readonly roles: Record<string, iam.Role> = {};

  constructor(scope: Construct, id: string, props: CiIdentitiesStackProps) {
    const { config, kind } = props;
    const account = kind === 'production' ? config.productionAccount : config.previewAccount;
    super(scope, id, {
      description: `GitHub Actions identities for ${config.repository} (${kind} account)`,
      terminationProtection: true,
      ...props,
      env: { account, region: props.env?.region },
    });
    const existing = config.existingProviderArns[kind];
    const provider = existing
      ? iam.OidcProviderNative.fromOidcProviderArn(this, 'GitHubOidc', existing)
      : new iam.OidcProviderNative(this, 'GitHubOidc', { url: `https://${GITHUB_OIDC_ISSUER}`, clientIds: ['sts.amazonaws.com'] });
    const trust = { provider, config };
    if (kind === 'production') {
      this.addProductionDeployRole(trust, account);
      this.addProductionDiffRole(trust, account);
    } else {
      const preview = this.addPreviewDeployRole(trust);
      // CloudFormation's execution policies and the roles' boundary in the preview account.
      addPreviewContainment(this);
      this.addPreviewCleanupRole(trust, account);
      this.allowPreviewSmokeTest(preview, account);
    }
  }

  private addProductionDeployRole(trust: Trust, account: string): void {
    // Only a job of the `production` environment gets this token subject; the environment's
    // deployment-branch rule (main only) and required reviewers are what gate it (docs/DEPLOY.md).
    const deploy = this.role(
      'ProductionDeploy',
      CI_ROLE_NAMES.production,
      trust,
      `environment:${PRODUCTION_ENVIRONMENT}`,
      'Deploys the reviewed production cloud assembly (through the CDK bootstrap roles)',
    );
    deploy.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['sts:AssumeRole', 'sts:TagSession'],
        resources: bootstrapRoleArns(this, ['deploy-role', 'file-publishing-role', 'image-publishing-role', 'lookup-role']),
      }),
    );
    this.allowRecordingReleases(deploy, account);
  }

  private allowRecordingReleases(deploy: iam.Role, account: string): void {
    // After a deploy whose canaries passed, the workflow records the release as good: a new
    // parameter under the history's path, written, never read or deleted, and never overwritten
    // (the condition key ssm:Overwrite,
    // https://docs.aws.amazon.com/service-authorization/latest/reference/list_awssystemsmanager.html);
    // bin/rollback.sh reads the records with an operator's credentials.
    const history = this.formatArn({
      service: 'ssm',
      resource: 'parameter',
      resourceName: `${releaseHistoryPath(PRODUCTION_STAGE).replace(/^\//, '')}/*`,
    });
    deploy.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['ssm:PutParameter'], resources: [history] }));
    deploy.addToPrincipalPolicy(
      new iam.PolicyStatement({
        effect: iam.Effect.DENY,
        actions: ['ssm:PutParameter'],
        resources: [history],
        conditions: { StringEquals: { 'ssm:Overwrite': 'true' } },
      }),
    );
    Validations.of(deploy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${stackArnForFindings(this, account, '')
        .replace(':cloudformation:', ':ssm:')
        .replace(/:stack\/\/\*$/, `:parameter${releaseHistoryPath(PRODUCTION_STAGE)}/*`)}]`,
      reason: 'The release history: one new parameter per record under its path (names are made when a release is recorded).',
    });
  }

  // Pushes to main, before the approval: reads the live templates for `cdk diff`, nothing else.
  private addProductionDiffRole(trust: Trust, account: string): void {
    const diff = this.role(
      'ProductionDiff',
      CI_ROLE_NAMES.diff,
      trust,
      'ref:refs/heads/main',
      "Reads the production stacks' templates for cdk diff before the approval; cannot change anything",
    );
    diff.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudformation:DescribeStacks', 'cloudformation:GetTemplate'],
        resources: PRODUCTION_STACK_NAMES.map((name) => stackArn(this, name)),
      }),
    );
    Validations.of(diff).acknowledge(
      ...PRODUCTION_STACK_NAMES.map((name) => ({
        id: `AwsSolutions-IAM5[Resource::${stackArnForFindings(this, account, name)}]`,
        reason: 'One named production stack; the suffix is the stack id CloudFormation assigns.',
      })),
    );
  }

  private addPreviewDeployRole(trust: Trust): iam.Role {
    const preview = this.role(
      'PreviewDeploy',
      CI_ROLE_NAMES.preview,
      trust,
      'pull_request',
      'Deploys and deletes pull-request previews in the preview account',
    );
    preview.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['sts:AssumeRole', 'sts:TagSession'],
        resources: bootstrapRoleArns(this, ['deploy-role', 'file-publishing-role', 'lookup-role']),
      }),
    );
    // Teardown deletes the stacks by name, without building the branch; CloudFormation runs
    // the deletion with the execution role the stack was deployed with.
    preview.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudformation:DeleteStack', 'cloudformation:DescribeStacks'],
        resources: PREVIEW_STACK_PATTERNS.map((pattern) => stackArn(this, pattern)),
      }),
    );
    return preview;
  }

  // The nightly preview-cleanup.yml (runs on main): lists stacks, deletes closed previews'.
  private addPreviewCleanupRole(trust: Trust, account: string): void {
    const cleanup = this.role(
      'PreviewCleanup',
      CI_ROLE_NAMES.previewCleanup,
      trust,
      'ref:refs/heads/main',
      'Deletes the preview stacks of closed pull requests (nightly workflow on main)',
    );
    cleanup.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['cloudformation:DescribeStacks'], resources: ['*'] }));
    cleanup.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudformation:DeleteStack'],
        resources: PREVIEW_STACK_PATTERNS.map((pattern) => stackArn(this, pattern)),
      }),
    );
    Validations.of(cleanup).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'DescribeStacks without a stack name (listing the previews) has no resource-level permission.',
      },
      ...PREVIEW_STACK_PATTERNS.map((pattern) => ({
        id: `AwsSolutions-IAM5[Resource::${stackArnForFindings(this, account, pattern)}]`,
        reason: 'Any pull-request preview stack of this app, in the preview account only.',
      })),
    );
  }

  /**
   * The smoke test after a deploy adds a temporary editor and removes it (users CLI): only
   * the users' items and directory of a preview's events table, never an event or another
   * table, with the preview's credential keys (lib/cdk/credential-keys-secret.ts names them).
   * Also acknowledges the preview role's stack patterns (addPreviewDeployRole).
   */
  private allowPreviewSmokeTest(preview: iam.Role, account: string): void {
    preview.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:DeleteItem'],
        resources: [this.formatArn({ service: 'dynamodb', resource: 'table', resourceName: PREVIEW_TABLE_PATTERN })],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [keys.usersDirectory, keys.userPartitions] } },
      }),
    );
    preview.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [
          this.formatArn({
            service: 'secretsmanager',
            resource: 'secret',
            resourceName: PREVIEW_SECRET_PATTERN,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    Validations.of(preview).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::${tableArnForFindings(this, account, PREVIEW_TABLE_PATTERN)}]`,
        reason:
          "The events tables of pull-request previews (generated names under MuseumApi-pr-*), users' items and directory only: the temporary smoke-test user.",
      },
      {
        id: `AwsSolutions-IAM5[Resource::${tableArnForFindings(this, account, PREVIEW_SECRET_PATTERN).replace(':dynamodb:', ':secretsmanager:').replace(':table/', ':secret:')}]`,
        reason: "The credential keys of pull-request previews (named after their stacks): the smoke-test user's credential hash.",
      },
      {
        id: `AwsSolutions-IAM5[Resource::${stackArnForFindings(this, account, 'MuseumApi-pr-*')}]`,
        reason: 'Any pull-request preview stack of this app, in the preview account only; the stack id suffix is unknown in advance.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::${stackArnForFindings(this, account, 'MuseumMockApi-pr-*')}]`,
        reason: 'Any pull-request preview mock stack of this app, in the preview account only; the stack id suffix is unknown in advance.',
      },
    );
  }

  /** A role `trust` lets assume for tokens whose subject is `repo:<repository>:<subject>`. */
  private role(id: string, roleName: string, trust: Trust, subject: string, description: string): iam.Role {
    const role = new iam.Role(this, id, {
      roleName,
      description,
      assumedBy: new iam.WebIdentityPrincipal(trust.provider.oidcProviderArn, {
        StringEquals: {
          [`${GITHUB_OIDC_ISSUER}:aud`]: 'sts.amazonaws.com',
          [`${GITHUB_OIDC_ISSUER}:sub`]: `repo:${trust.config.repository}:${subject}`,
        },
      }),
    });
    this.roles[roleName] = role;
    return role;
  }
}
