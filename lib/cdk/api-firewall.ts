// The WAF web ACL in front of the API stage (on in production; `-c waf=false` opts out). WAF
// runs before the stage's method throttling and the authorizer, so what it blocks neither
// empties a method's bucket for other clients nor costs a check:
// - addresses an operator blocks by hand (two IP sets, IPv4 and IPv6, empty when deployed; the
//   runbook in docs/DEPLOY.md adds to them with `aws wafv2 update-ip-set`),
// - AWS's IP reputation list (sources of bots and attacks),
// - a rate-based rule per client IP (sized in stage-config.ts for a kiosk network behind one NAT),
// - a rate-based rule per credential (the Authorization header, from any address), so that one
//   client spread over many addresses cannot hold a method's bucket empty either; both well below
//   a method's limit. WAF reacts within tens of seconds, not at once ("Usually, this delay is
//   below 30 seconds",
//   https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-caveats.html).
// - AWS's common rule set and known-bad-inputs rule set, which fit a JSON API.
// Blocked requests get the WAF_FILTERED gateway response (403 problem+json). Blocked and counted
// requests are logged to `aws-waf-logs-museum-special-events-<stage>-<stack uuid>` with the Authorization header redacted.
import { Arn, ArnFormat, Fn, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { StageConfig } from './stage-config.ts';

/** Rule names, in evaluation order. */
export const FIREWALL_RULES = {
  blockedAddresses: 'blocked-ip-addresses',
  ipReputation: 'aws-ip-reputation-list',
  rateLimit: 'rate-limit-per-client-ip',
  credentialRateLimit: 'rate-limit-per-credential',
  commonRules: 'aws-common-rule-set',
  knownBadInputs: 'aws-known-bad-inputs',
} as const;

export class ApiFirewall extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  readonly logGroup: logs.LogGroup;
  /** Empty at deployment; an operator adds addresses to block (docs/DEPLOY.md, FailedLogins). */
  readonly blockedAddresses: { ipv4: wafv2.CfnIPSet; ipv6: wafv2.CfnIPSet };

  constructor(scope: Construct, id: string, props: { config: StageConfig; stage: apigw.Stage }) {
    super(scope, id);
    const { config } = props;
    this.blockedAddresses = {
      ipv4: this.blockedAddressSet('BlockedIpv4', 'IPV4', config),
      ipv6: this.blockedAddressSet('BlockedIpv6', 'IPV6', config),
    };
    this.webAcl = this.createWebAcl(config);
    new wafv2.CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    this.logGroup = this.createLogGroup(config);
    this.logBlockedAndCounted();
  }

  // CloudFormation names the sets (no fixed name: a redeploy never collides with a leftover).
  // Addresses added by hand stay until a deploy changes a set's template (CloudFormation then
  // writes this empty list back): the runbook says to write a lasting block into the code.
  private blockedAddressSet(id: string, version: 'IPV4' | 'IPV6', config: StageConfig): wafv2.CfnIPSet {
    return new wafv2.CfnIPSet(this, id, {
      scope: 'REGIONAL',
      ipAddressVersion: version,
      addresses: [],
      description: `${version} addresses blocked by hand, stage ${config.stage}`,
    });
  }

  private createWebAcl(config: StageConfig): wafv2.CfnWebACL {
    const metricName = metricNameOf(config);
    return new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      // The credential rule's key is the Authorization value, which a rate-based rule writes into
      // the log it blocks (rateBasedRuleList.customValues): data protection replaces it there and
      // everywhere else in the log and sampled requests
      // (https://docs.aws.amazon.com/waf/latest/APIReference/API_DataProtection.html).
      dataProtectionConfig: {
        dataProtections: [{ field: { fieldType: 'SINGLE_HEADER', fieldKeys: ['authorization'] }, action: 'SUBSTITUTION' }],
      },
      visibilityConfig: { cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true, metricName },
      rules: [
        ...addressRules(metricName, this.blockedAddresses),
        ...rateLimitRules(metricName, config),
        ...managedRuleSetRules(metricName),
      ],
    });
  }

  // WAF accepts only log groups whose name starts with aws-waf-logs-.
  private createLogGroup(config: StageConfig): logs.LogGroup {
    return new logs.LogGroup(this, 'Logs', {
      // Retained in production, so the name must differ per stack instance or a redeploy after a
      // deletion fails with "already exists" (Museum-RDP1): the suffix is the stack id's UUID.
      logGroupName: `aws-waf-logs-museum-special-events-${config.stage}-${Fn.select(2, Fn.split('/', Stack.of(this).stackId))}`,
      // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- RetentionDays values are the numbers of days; the stage config checks it is one
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
  }

  private logBlockedAndCounted(): void {
    new wafv2.CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      // The log group's ARN without the `:*` suffix CloudFormation's Arn attribute carries.
      logDestinationConfigs: [
        Arn.format(
          { service: 'logs', resource: 'log-group', resourceName: this.logGroup.logGroupName, arnFormat: ArnFormat.COLON_RESOURCE_NAME },
          Stack.of(this),
        ),
      ],
      // WAF logs request headers: the Basic credentials must never reach a log.
      redactedFields: [{ singleHeader: { Name: 'authorization' } }],
      // Only what WAF blocked or counted: allowed requests are already in the access log.
      loggingFilter: {
        DefaultBehavior: 'DROP',
        Filters: [
          {
            Behavior: 'KEEP',
            Requirement: 'MEETS_ANY',
            Conditions: [{ ActionCondition: { Action: 'BLOCK' } }, { ActionCondition: { Action: 'COUNT' } }],
          },
        ],
      },
    });
  }
}

type Rule = wafv2.CfnWebACL.RuleProperty;

/** The web ACL's metric name; each rule's is this and the rule's own suffix. */
function metricNameOf(config: StageConfig): string {
  return `museum-special-events-${config.stage}`;
}

function visibility(metricName: string, name: string): wafv2.CfnWebACL.VisibilityConfigProperty {
  return { cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true, metricName: `${metricName}-${name}` };
}

function managed(name: string, overrides: wafv2.CfnWebACL.RuleActionOverrideProperty[] = []): wafv2.CfnWebACL.StatementProperty {
  return {
    managedRuleGroupStatement: { vendorName: 'AWS', name, ...(overrides.length > 0 ? { ruleActionOverrides: overrides } : {}) },
  };
}

/** Priorities 0 and 1: the operator's blocked addresses, then AWS's IP reputation list. */
function addressRules(metricName: string, blockedAddresses: { ipv4: wafv2.CfnIPSet; ipv6: wafv2.CfnIPSet }): Rule[] {
  return [
    {
      name: FIREWALL_RULES.blockedAddresses,
      priority: 0,
      action: { block: {} },
      statement: {
        orStatement: {
          statements: [
            { ipSetReferenceStatement: { arn: blockedAddresses.ipv4.attrArn } },
            { ipSetReferenceStatement: { arn: blockedAddresses.ipv6.attrArn } },
          ],
        },
      },
      visibilityConfig: visibility(metricName, 'blocked-addresses'),
    },
    {
      name: FIREWALL_RULES.ipReputation,
      priority: 1,
      overrideAction: { none: {} },
      statement: managed('AWSManagedRulesAmazonIpReputationList'),
      visibilityConfig: visibility(metricName, 'ip-reputation'),
    },
  ];
}

/** Priorities 2 and 3: requests per client address, then per credential, in five minutes. */
function rateLimitRules(metricName: string, config: StageConfig): Rule[] {
  return [
    {
      name: FIREWALL_RULES.rateLimit,
      priority: 2,
      action: { block: {} },
      statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit: config.wafRateLimitPer5Minutes, evaluationWindowSec: 300 } },
      visibilityConfig: visibility(metricName, 'rate-limit'),
    },
    {
      name: FIREWALL_RULES.credentialRateLimit,
      priority: 3,
      action: { block: {} },
      // Requests without the header are not counted (they never reach the authorizer: 401).
      // https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-aggregation-options.html
      statement: {
        rateBasedStatement: {
          aggregateKeyType: 'CUSTOM_KEYS',
          customKeys: [{ header: { name: 'authorization', textTransformations: [{ priority: 0, type: 'NONE' }] } }],
          limit: config.wafCredentialRateLimitPer5Minutes,
          evaluationWindowSec: 300,
        },
      },
      visibilityConfig: visibility(metricName, 'credential-rate-limit'),
    },
  ];
}

/** Priorities 4 and 5: AWS's common rule set and known-bad-inputs rule set. */
function managedRuleSetRules(metricName: string): Rule[] {
  return [
    {
      name: FIREWALL_RULES.commonRules,
      priority: 4,
      overrideAction: { none: {} },
      // SizeRestrictions_BODY blocks bodies over 8 KB; the API accepts 64 KB (a long event
      // description) and answers larger bodies itself with a 413 problem. Counted, not blocked.
      statement: managed('AWSManagedRulesCommonRuleSet', [{ name: 'SizeRestrictions_BODY', actionToUse: { count: {} } }]),
      visibilityConfig: visibility(metricName, 'common-rules'),
    },
    {
      name: FIREWALL_RULES.knownBadInputs,
      priority: 5,
      overrideAction: { none: {} },
      statement: managed('AWSManagedRulesKnownBadInputsRuleSet'),
      visibilityConfig: visibility(metricName, 'known-bad-inputs'),
    },
  ];
}

/** Without the web ACL (previews, or `-c waf=false`), say why where cdk-nag looks. */
export function acknowledgeNoFirewall(stage: apigw.Stage, config: StageConfig): void {
  Validations.of(stage).acknowledge({
    id: 'AwsSolutions-APIG3',
    reason: config.isProduction
      ? "WAF was turned off explicitly with -c waf=false; stage throttling and the authorizer's reserved concurrency still bound the request and credential-guessing rates."
      : 'A preview holds throw-away data and is throttled to 10 rps; its web ACL would cost more than the preview (production has one by default).',
  });
}
