// Optional WAF web ACL on the API stage (`-c waf=true`): a rate-based rule that blocks a client
// IP sending more than `wafRateLimitPer5Minutes` requests in five minutes. WAF runs before the
// authorizer, so a password-guessing client is stopped before it costs a scrypt verification.
// Off by default: a web ACL costs about $6 a month at rest, and stage throttling already bounds
// the guessing rate of the whole API.
import { Validations } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { StageConfig } from './stage-config.ts';

export class BruteForceProtection extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: { config: StageConfig; stage: apigw.Stage }) {
    super(scope, id);
    const metricName = `museum-special-events-${props.config.stage}`;
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: { cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true, metricName },
      rules: [
        {
          name: 'rate-limit-per-client-ip',
          priority: 0,
          action: { block: {} },
          statement: {
            rateBasedStatement: { aggregateKeyType: 'IP', limit: props.config.wafRateLimitPer5Minutes, evaluationWindowSec: 300 },
          },
          visibilityConfig: { cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true, metricName: `${metricName}-rate-limit` },
        },
      ],
    });
    const association = new wafv2.CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    association.node.addDependency(props.stage);
  }
}

/** Without the web ACL, the stage has no WAF: say why, where cdk-nag will look. */
export function acknowledgeNoWaf(stage: apigw.Stage): void {
  Validations.of(stage).acknowledge({
    id: 'AwsSolutions-APIG3',
    reason:
      'WAF is optional (-c waf=true adds a per-IP rate-based rule); by default stage throttling bounds request and password-guessing rates, and a web ACL would cost ~$6/month at rest.',
  });
}
