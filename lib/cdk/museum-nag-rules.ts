// cdk-nag rules the AwsSolutions pack lacks. Its DDB3 (point-in-time recovery) inspects only
// AWS::DynamoDB::Table, so TableV2 tables (AWS::DynamoDB::GlobalTable) were never checked: DDBGT1
// and DDBGT2 check every replica of every GlobalTable. RDP1 keeps a stack redeployable after its
// deletion: a resource the deletion leaves behind (DeletionPolicy Retain) must not have a physical
// name the next deploy would ask for again. Like AwsSolutions findings, an unacknowledged one
// fails synthesis; acknowledge with `Validations.of(construct).acknowledge(...)`.
import { CfnDeletionPolicy, Stack, type CfnResource } from 'aws-cdk-lib';
import { CfnGlobalTable } from 'aws-cdk-lib/aws-dynamodb';
import { fixedPhysicalName } from './physical-names.ts';
import { NagMessageLevel, NagPack, NagRuleCompliance, type NagPackProps } from 'cdk-nag';
import type { IConstruct } from 'constructs';

export const MUSEUM_NAG_RULES = {
  pointInTimeRecovery: 'Museum-DDBGT1',
  deletionProtection: 'Museum-DDBGT2',
  redeployable: 'Museum-RDP1',
} as const;

interface Replica {
  region?: unknown;
  pointInTimeRecoverySpecification?: { pointInTimeRecoveryEnabled?: unknown };
  deletionProtectionEnabled?: unknown;
}

function replicas(node: CfnGlobalTable): Replica[] {
  const resolved: unknown = Stack.of(node).resolve(node.replicas);
  return Array.isArray(resolved) ? (resolved as Replica[]) : [];
}

/** Non-compliant unless every replica has the property resolved to `true`. */
function everyReplica(check: (replica: Replica) => unknown) {
  return (node: CfnResource): NagRuleCompliance => {
    if (!(node instanceof CfnGlobalTable)) return NagRuleCompliance.NOT_APPLICABLE;
    const all = replicas(node);
    return all.length > 0 && all.every((replica) => check(replica) === true)
      ? NagRuleCompliance.COMPLIANT
      : NagRuleCompliance.NON_COMPLIANT;
  };
}

export class MuseumChecks extends NagPack {
  readonly name = 'Museum';

  constructor(scope?: IConstruct, props?: NagPackProps) {
    super(scope, props);
    this.packName = 'Museum';
  }

  protected checkResource(node: CfnResource): void {
    this.applyRule({
      ruleSuffixOverride: 'DDBGT1',
      info: 'A DynamoDB global table (TableV2) replica does not have point-in-time recovery enabled.',
      explanation: 'Point-in-time recovery restores the table to any second of the last 35 days after an accidental write or delete.',
      level: NagMessageLevel.ERROR,
      node,
      rule: everyReplica((replica) => replica.pointInTimeRecoverySpecification?.pointInTimeRecoveryEnabled),
    });
    this.applyRule({
      ruleSuffixOverride: 'DDBGT2',
      info: 'A DynamoDB global table (TableV2) replica does not have deletion protection enabled.',
      explanation: 'Deletion protection refuses DeleteTable, whoever calls it, until it is turned off explicitly.',
      level: NagMessageLevel.ERROR,
      node,
      rule: everyReplica((replica) => replica.deletionProtectionEnabled),
    });
    this.applyRule({
      ruleSuffixOverride: 'RDP1',
      info: 'A retained resource has a fixed physical name: after the stack is deleted, deploying it again fails with "already exists".',
      explanation:
        "Let CloudFormation generate the name, or make it differ per stack instance (e.g. include the stack id's UUID or a resource the stack creates).",
      level: NagMessageLevel.ERROR,
      node,
      rule: (resource: CfnResource) => {
        const retained = [CfnDeletionPolicy.RETAIN, CfnDeletionPolicy.RETAIN_EXCEPT_ON_CREATE, CfnDeletionPolicy.SNAPSHOT].includes(
          resource.cfnOptions.deletionPolicy as CfnDeletionPolicy,
        );
        if (!retained) return NagRuleCompliance.NOT_APPLICABLE;
        return fixedPhysicalName(resource) === undefined ? NagRuleCompliance.COMPLIANT : NagRuleCompliance.NON_COMPLIANT;
      },
    });
  }
}
