// The CDK app's contents, shared by bin/app.ts and the infrastructure tests: both stacks of one
// stage (context `stage`, default prod); in production also the once-per-account API Gateway
// settings; with `-c githubRepository=...` the CI identities (deployed by an administrator).
// cdk-nag's AwsSolutions pack and this project's own rules run on all of it; unacknowledged
// errors fail synthesis.
import { Tags, Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { API_GATEWAY_ACCOUNT_STACK_NAME, ApiGatewayAccountStack } from './api-gateway-account-stack.ts';
import { CiIdentitiesStack, readCiIdentitiesConfig } from './ci-identities-stack.ts';
import { readDeploymentRegion } from './deployment-region.ts';
import { MuseumApiStack } from './museum-api-stack.ts';
import { MuseumMockApiStack } from './museum-mock-api-stack.ts';
import { applyPreviewBoundary } from './preview-containment.ts';
import { MuseumChecks } from './museum-nag-rules.ts';
import { readStageConfig, type StageConfig } from './stage-config.ts';

export interface MuseumApp {
  config: StageConfig;
  api: MuseumApiStack;
  mock: MuseumMockApiStack;
  /** Production only: previews rely on the setting their account already has. */
  account: ApiGatewayAccountStack | undefined;
  ci: CiIdentitiesStack[];
}

export function addMuseumStacks(app: App, options: { functionsDirectory?: string } = {}): MuseumApp {
  const config = readStageConfig(app.node);
  // The region is always explicit (lib/cdk/deployment-region.ts); the account only when the CLI knows
  // it from credentials, so synthesis needs none.
  const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: readDeploymentRegion(app.node) };
  const api = new MuseumApiStack(app, `MuseumApi-${config.stage}`, { env, config, ...options });
  const mock = new MuseumMockApiStack(app, `MuseumMockApi-${config.stage}`, { env, config });
  const account = config.isProduction ? new ApiGatewayAccountStack(app, API_GATEWAY_ACCOUNT_STACK_NAME, { env }) : undefined;
  if (account) {
    const reason = "Execution logging needs the account's API Gateway CloudWatch role";
    api.addStackDependency(account, reason);
    mock.addStackDependency(account, reason);
  }
  for (const stack of [api, mock]) {
    // A preview's roles carry the preview account's boundary (lib/cdk/preview-containment.ts).
    if (!config.isProduction) applyPreviewBoundary(stack);
    Tags.of(stack).add('project', 'museum-special-events');
    Tags.of(stack).add('stage', config.stage);
  }
  const ciConfig = readCiIdentitiesConfig(app.node);
  const ci = ciConfig
    ? (['production', 'preview'] as const).map(
        (kind) => new CiIdentitiesStack(app, `MuseumCiIdentities-${kind}`, { config: ciConfig, kind, env: { region: env.region } }),
      )
    : [];
  for (const stack of [account, ...ci]) if (stack) Tags.of(stack).add('project', 'museum-special-events');
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new MuseumChecks(app));
  return { config, api, mock, account, ci };
}
