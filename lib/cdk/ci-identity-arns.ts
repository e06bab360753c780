// The ARNs the CI identities' policies name (lib/cdk/ci-identities-stack.ts), and the same ARNs as
// cdk-nag writes them in its findings, where the acknowledgements must match them exactly.
import { DefaultStackSynthesizer, Token, type Stack } from 'aws-cdk-lib';

/** Roles of the CDK bootstrap stack (default qualifier) in this stack's account and region. */
export function bootstrapRoleArns(stack: Stack, names: string[]): string[] {
  const qualifier =
    (stack.node.tryGetContext('@aws-cdk/core:bootstrapQualifier') as string | undefined) ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER;
  return names.map((name) =>
    stack.formatArn({
      service: 'iam',
      region: '',
      resource: 'role',
      resourceName: `cdk-${qualifier}-${name}-${stack.account}-${stack.region}`,
    }),
  );
}

/** Every stack named `name` (a pattern may hold `*`): the suffix is the stack id CloudFormation assigns. */
export function stackArn(stack: Stack, name: string): string {
  return stack.formatArn({ service: 'cloudformation', resource: 'stack', resourceName: `${name}/*` });
}

/** A stack ARN as cdk-nag writes it in a finding: literals where known, else the pseudo parameters. */
export function stackArnForFindings(stack: Stack, account: string, name: string): string {
  const partition = Token.isUnresolved(stack.partition) ? '<AWS::Partition>' : stack.partition;
  const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
  return `arn:${partition}:cloudformation:${region}:${account}:stack/${name}/*`;
}

/** A DynamoDB table ARN as cdk-nag writes it in a finding. */
export function tableArnForFindings(stack: Stack, account: string, name: string): string {
  return stackArnForFindings(stack, account, '')
    .replace(':cloudformation:', ':dynamodb:')
    .replace(/:stack\/\/\*$/, `:table/${name}`);
}
