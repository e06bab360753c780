// Writes lib/cdk/resource-handler-permissions.json: for each CloudFormation resource type the
// preview account deploys, the IAM actions its resource provider schema says CloudFormation's
// role needs, per handler. The schemas are AWS's (the CloudFormation registry's, as
// `aws cloudformation describe-type --type RESOURCE --type-name <type>` returns them in `Schema`);
// cfn-lint's bundled copies drop `handlers`, so they are read from a checkout of
// pulumi/pulumi-aws-native, which vendors them in aws-cloudformation-schema/:
//
//   git clone --depth 1 https://github.com/pulumi/pulumi-aws-native /tmp/pulumi-aws-native
//   node --import tsx scripts/resource-handler-permissions.ts /tmp/pulumi-aws-native [AWS::Service::Type ...]
//
// Without type arguments it refreshes the types the file already lists; with them it adds those.
// Only create, read, update and delete are kept (CloudFormation calls them during a deploy and a
// deletion; `list` only for resource scanning and Cloud Control listing), plus `tagging`, which
// CloudFormation needs to apply the stack's tags.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const OUTPUT = new URL('../lib/cdk/resource-handler-permissions.json', import.meta.url);
const HANDLERS = ['create', 'read', 'update', 'delete'] as const;

interface Schema {
  typeName: string;
  handlers?: Partial<Record<(typeof HANDLERS)[number], { permissions?: string[] }>>;
  tagging?: { permissions?: string[] };
}

/**
 * Types whose registry schema has no `handlers` section: resources CloudFormation still creates
 * without a resource provider, with the caller's (the execution role's) own permissions. Their
 * actions come from the service's IAM page instead. AWS::Budgets::Budget: "budgets:ModifyBudget"
 * creates, updates and deletes a budget and its notifications, "budgets:ViewBudget" reads it, and
 * its ResourceTags need the tagging actions
 * (https://docs.aws.amazon.com/cost-management/latest/userguide/billing-permissions-ref.html).
 */
const WITHOUT_PROVIDER: Record<string, Record<(typeof HANDLERS)[number] | 'tagging', string[]>> = {
  'AWS::Budgets::Budget': {
    create: ['budgets:ModifyBudget', 'budgets:ViewBudget'],
    read: ['budgets:ViewBudget'],
    update: ['budgets:ModifyBudget', 'budgets:ViewBudget'],
    delete: ['budgets:ModifyBudget', 'budgets:ViewBudget'],
    tagging: ['budgets:ListTagsForResource', 'budgets:TagResource', 'budgets:UntagResource'],
  },
};

const [checkout, ...added] = process.argv.slice(2);
if (!checkout) throw new Error('usage: node --import tsx scripts/resource-handler-permissions.ts <pulumi-aws-native checkout> [type ...]');
const current = JSON.parse(readFileSync(OUTPUT, 'utf8')) as { types: Record<string, unknown> };
const types = [...new Set([...Object.keys(current.types), ...added])].sort();
const commit = execFileSync('git', ['-C', checkout, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
const date = execFileSync('git', ['-C', checkout, 'show', '-s', '--format=%cs', 'HEAD'], { encoding: 'utf8' }).trim();

const entries = types.map((type) => {
  const file = `aws-cloudformation-schema/${type.toLowerCase().replaceAll('::', '-')}.json`;
  const schema = JSON.parse(readFileSync(join(checkout, file), 'utf8')) as Schema;
  if (schema.typeName !== type) throw new Error(`${file} describes ${schema.typeName}, not ${type}`);
  const withoutProvider = WITHOUT_PROVIDER[type];
  if (withoutProvider) return [type, { schema: file, ...withoutProvider }] as const;
  if (!schema.handlers) throw new Error(`${file} has no handlers section: add its actions to WITHOUT_PROVIDER`);
  const handlers = Object.fromEntries(
    HANDLERS.map((handler) => [handler, [...new Set(schema.handlers?.[handler]?.permissions ?? [])].sort()]),
  );
  return [type, { schema: file, ...handlers, tagging: [...new Set(schema.tagging?.permissions ?? [])].sort() }] as const;
});

writeFileSync(
  OUTPUT,
  `${JSON.stringify(
    {
      source: `AWS CloudFormation registry resource provider schemas (handlers.<handler>.permissions and tagging.permissions), as vendored by https://github.com/pulumi/pulumi-aws-native at commit ${commit} (${date}); each type names its file; types without a resource provider (no handlers in their schema) from their service's IAM page (WITHOUT_PROVIDER in the generator)`,
      generator: 'scripts/resource-handler-permissions.ts',
      types: Object.fromEntries(entries),
    },
    null,
    1,
  )}\n`,
);
console.log(`${OUTPUT.pathname}: ${entries.length} types from ${commit}`);
