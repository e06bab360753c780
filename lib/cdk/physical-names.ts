// The physical name a resource asks CloudFormation for, when that name would be the same in a
// second deployment of the stack: a literal, or built only from pseudo parameters that do not
// change between deployments (account, region, partition, stack name). A name that references a
// resource of the stack or AWS::StackId differs per stack instance, so it is not fixed.
import { Stack, type CfnResource } from 'aws-cdk-lib';

/**
 * Name-bearing properties of the resource types that can be retained (or the project might
 * retain), as the L1 classes expose them. A type not listed has no name property worth checking
 * here; add it when the stacks start retaining one.
 */
const NAME_PROPERTIES: Record<string, string> = {
  'AWS::Logs::LogGroup': 'logGroupName',
  'AWS::DynamoDB::Table': 'tableName',
  'AWS::DynamoDB::GlobalTable': 'tableName',
  'AWS::S3::Bucket': 'bucketName',
  'AWS::IAM::Role': 'roleName',
  'AWS::IAM::ManagedPolicy': 'managedPolicyName',
  'AWS::KMS::Alias': 'aliasName',
  'AWS::SNS::Topic': 'topicName',
  'AWS::SQS::Queue': 'queueName',
  'AWS::SecretsManager::Secret': 'name',
  'AWS::Lambda::Function': 'functionName',
  'AWS::WAFv2::IPSet': 'name',
  'AWS::WAFv2::WebACL': 'name',
  'AWS::CloudWatch::Dashboard': 'dashboardName',
  'AWS::Backup::BackupVault': 'backupVaultName',
};

/** Pseudo parameters whose value is the same in every deployment of the stack. */
const STABLE_PSEUDO_PARAMETERS = new Set(['AWS::AccountId', 'AWS::Region', 'AWS::Partition', 'AWS::URLSuffix', 'AWS::StackName']);

export function fixedPhysicalName(resource: CfnResource): string | undefined {
  const property = NAME_PROPERTIES[resource.cfnResourceType];
  if (!property) return undefined;
  const resolved: unknown = Stack.of(resource).resolve((resource as unknown as Record<string, unknown>)[property]);
  if (resolved === undefined || resolved === null || resolved === '') return undefined;
  return dependsOnlyOnStableValues(resolved) ? JSON.stringify(resolved) : undefined;
}

function dependsOnlyOnStableValues(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (Array.isArray(value)) return value.every(dependsOnlyOnStableValues);
  const entries = Object.entries(value as Record<string, unknown>);
  for (const [key, inner] of entries) {
    if (key === 'Ref') return typeof inner === 'string' && STABLE_PSEUDO_PARAMETERS.has(inner);
    if (key === 'Fn::GetAtt' || key === 'Fn::ImportValue') return false;
    if (!dependsOnlyOnStableValues(inner)) return false;
  }
  return true;
}
