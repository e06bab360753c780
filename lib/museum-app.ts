// The CDK app's contents, shared by bin/app.ts and the infrastructure tests: both stacks of one
// stage (context `stage`, default prod) and the cdk-nag AwsSolutions checks, whose unacknowledged
// errors fail synthesis.
import { Tags, Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { MuseumApiStack } from './museum-api-stack.ts';
import { MuseumMockApiStack } from './museum-mock-api-stack.ts';
import { readStageConfig, type StageConfig } from './stage-config.ts';

export interface MuseumApp {
  config: StageConfig;
  api: MuseumApiStack;
  mock: MuseumMockApiStack;
}

export function addMuseumStacks(app: App, options: { functionsDirectory?: string } = {}): MuseumApp {
  const config = readStageConfig(app.node);
  // Environment-agnostic unless the CLI knows an account and region: synthesis needs no credentials.
  const env = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
  const api = new MuseumApiStack(app, `MuseumApi-${config.stage}`, { env, config, ...options });
  const mock = new MuseumMockApiStack(app, `MuseumMockApi-${config.stage}`, { env, config });
  mock.addStackDependency(api, 'API Gateway execution logging needs the account CloudWatch role the API stack sets');
  for (const stack of [api, mock]) {
    Tags.of(stack).add('project', 'museum-special-events');
    Tags.of(stack).add('stage', config.stage);
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { config, api, mock };
}
