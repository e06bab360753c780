// Each method that needs no credentials (the 405 `ANY` mocks, `OPTIONS`, `GET /v1.1`, the
// OpenAPI document and docs page, and whatever else is added with authorization NONE) gets its
// own method-level throttle, far below the stage's. Without it they draw on the same per-method
// default as the routes (the stage's 100 rps / burst 200), so anyone, without a password, could
// spend the stage's capacity: ten addresses each at the WAF's per-address limit (3,000 per 5
// minutes, 10 rps) already reach 100 rps.
//
// Sizing: a tenth of the stage rate per method (production 10 rps, burst 20; previews 1 rps,
// burst 2). These answers are read by people and tools, not by the museum's clients in a loop:
// the service index and documents by a developer now and then, OPTIONS by browsers whose
// preflight is cached for an hour (CORS maxAge), 405 only by mistake. 10 rps is 36,000 an hour
// per method. Over it API Gateway answers 429 (THROTTLED, with Retry-After) to that method only;
// the authenticated routes keep the stage's limit.
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import type { StageConfig } from './stage-config.ts';

export interface UnauthenticatedThrottle {
  rateLimit: number;
  burstLimit: number;
}

export function unauthenticatedThrottle(config: StageConfig): UnauthenticatedThrottle {
  return {
    rateLimit: Math.max(1, Math.floor(config.throttle.rateLimit / 10)),
    burstLimit: Math.max(2, Math.floor(config.throttle.burstLimit / 10)),
  };
}

export class UnauthenticatedThrottling extends Construct {
  /** `METHOD /path` of every throttled method. */
  readonly methods: string[];

  /** Call after every method of the API exists. */
  constructor(scope: Construct, id: string, props: { config: StageConfig; api: apigw.RestApi }) {
    super(scope, id);
    const throttle = unauthenticatedThrottle(props.config);
    const stage = props.api.deploymentStage.node.defaultChild as apigw.CfnStage;
    const existing = (stage.methodSettings ?? []) as apigw.CfnStage.MethodSettingProperty[];
    // The stage-wide entry carries logging and metrics: each override repeats them, since a
    // method setting replaces the stage's for that method.
    const stageWide = existing.find((setting) => setting.resourcePath === '/*' && setting.httpMethod === '*') ?? {};
    const open = props.api.methods.filter((method) => (method.node.defaultChild as apigw.CfnMethod).authorizationType === apigw.AuthorizationType.NONE);
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
