// The region every stack of the app is synthesized for. The CDK CLI falls back to us-east-1 when
// it finds no region, and an assembly synthesized that way deploys to us-east-1 whatever
// credentials it is deployed with (its manifests and templates carry the literal region). So the
// app never takes the CLI's CDK_DEFAULT_REGION: the region must be given, as `-c region=...` or
// the AWS_REGION / AWS_DEFAULT_REGION variable the AWS CLI and GitHub's credentials action set.
import type { Node } from 'constructs';

const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d$/;

type Context = Pick<Node, 'tryGetContext'>;

export function readDeploymentRegion(node: Context, environment: NodeJS.ProcessEnv = process.env): string {
  const fromContext: unknown = node.tryGetContext('region');
  const region = [fromContext, environment.AWS_REGION, environment.AWS_DEFAULT_REGION]
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a CDK context value (-c or cdk.json): any JSON at runtime, taken as text
    .map((value) => (value === undefined || value === null ? '' : String(value).trim()))
    .find((value) => value !== '');
  if (!region) {
    throw new Error(
      'No region: set AWS_REGION (e.g. `AWS_REGION=eu-west-1 npx cdk synth`) or pass -c region=eu-west-1. ' +
        'The CDK CLI would otherwise fall back to us-east-1 and the assembly would deploy there.',
    );
  }
  if (!REGION_PATTERN.test(region)) throw new Error(`"${region}" is not an AWS region name such as eu-west-1`);
  return region;
}
