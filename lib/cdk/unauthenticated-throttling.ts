// Each method that needs no credentials (the 405 `ANY` mocks, `OPTIONS`, `GET /v1.1`, the
// OpenAPI document and docs page, and whatever else is added with authorization NONE) gets its
// own method-level throttle, METHOD_THROTTLING.unauthenticated (functions/routes.ts, which the
// local gateway enforces too). Without it they would draw on the stage's default, sized for the
// authenticated methods. API Gateway throttles per method, so what anyone can make these methods
// cost is the sum of their rates: at most UNAUTHENTICATED_MONTHLY_BUDGET_USD a month at the
// ceiling (test/infra/throttling.test.ts checks it on the synthesized template). These answers are
// read by people and tools, not by clients in a loop: the index and documents by a developer now
// and then, OPTIONS by browsers whose preflight is cached for an hour (CORS maxAge), 405 only by
// mistake. Over the limit API Gateway answers 429 (THROTTLED, with Retry-After) to that method only.
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { METHOD_THROTTLING } from '../../functions/routes.ts';
import type { StageConfig } from './stage-config.ts';

export interface UnauthenticatedThrottle {
  rateLimit: number;
  burstLimit: number;
}

export function unauthenticatedThrottle(): UnauthenticatedThrottle {
  return { ...METHOD_THROTTLING.unauthenticated };
}

export class UnauthenticatedThrottling extends Construct {
  /** `METHOD /path` of every throttled method. */
  readonly methods: string[];

  /** Call after every method of the API exists. */
  constructor(scope: Construct, id: string, props: { config: StageConfig; api: apigw.RestApi }) {
    super(scope, id);
    const throttle = unauthenticatedThrottle();
    const stage = props.api.deploymentStage.node.defaultChild as apigw.CfnStage;
    const existing = (stage.methodSettings ?? []) as apigw.CfnStage.MethodSettingProperty[];
    // The stage-wide entry carries logging and metrics: each override repeats them, since a
    // method setting replaces the stage's for that method.
    const stageWide = existing.find((setting) => setting.resourcePath === '/*' && setting.httpMethod === '*') ?? {};
    const open = props.api.methods.filter(
      (method) => (method.node.defaultChild as apigw.CfnMethod).authorizationType === apigw.AuthorizationType.NONE,
    );
    this.methods = open.map((method) => `${method.httpMethod} ${method.resource.path}`);
    stage.methodSettings = [
      ...existing,
      ...open.map((method) => ({
        ...stageWide,
        // API Gateway's encoding of a resource path in a method setting: every / becomes ~1.
        resourcePath: method.resource.path === '/' ? '/' : `/${method.resource.path.replace(/\//g, '~1')}`,
        httpMethod: method.httpMethod,
        throttlingRateLimit: throttle.rateLimit,
        throttlingBurstLimit: throttle.burstLimit,
      })),
    ];
  }
}
