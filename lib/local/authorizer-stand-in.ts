// API Gateway's authorizer result cache, as the local gateway emulates it: a result is kept per
// identity source (the Authorization header) for the stage's TTL and reused for every route, so a
// cached policy must cover every route the caller may use. Only results that allow are cached (an
// error, a 401 or a throttled invocation is not). The authorizer's reserved concurrency is
// Lambda's, enforced by the local runtime (lambda-runtime.ts).
// https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-lambda-authorizer-output.html
// https://docs.aws.amazon.com/apigateway/latest/developerguide/configure-api-gateway-lambda-authorization.html
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { AUTHORIZER_IDENTITY } from '../../functions/unrouted-functions.ts';

export class AuthorizerStandIn {
  private readonly cache = new Map<string, { result: APIGatewayAuthorizerResult; expiresAt: number }>();
  /** The result cache TTL in force: the deployed default unless the run sets another. */
  readonly cacheTtlSeconds: number;
  private readonly cacheTtlMs: number;

  constructor(cacheTtlSeconds: number = AUTHORIZER_IDENTITY.defaultCacheTtlSeconds) {
    this.cacheTtlSeconds = cacheTtlSeconds;
    this.cacheTtlMs = cacheTtlSeconds * 1000;
  }

  /** API Gateway's cached result for this identity source, if still valid. */
  cached(identitySource: string): APIGatewayAuthorizerResult | undefined {
    const entry = this.cache.get(identitySource);
    return entry && entry.expiresAt > Date.now() ? entry.result : undefined;
  }

  remember(identitySource: string, result: APIGatewayAuthorizerResult): void {
    if (this.cacheTtlMs > 0) this.cache.set(identitySource, { result, expiresAt: Date.now() + this.cacheTtlMs });
  }
}
