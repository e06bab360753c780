// The parts of API Gateway and Lambda around a REQUEST authorizer that the local gateway emulates:
// the authorizer result cache (per identity source, for the stage's TTL) and the function's
// reserved concurrency. Over that cap Lambda throttles the invocation and API Gateway answers
// AUTHORIZER_FAILURE at once (503 + Retry-After): neither queues, so neither does this. Fairness
// between logins is the authorizer's own (functions/auth/basic-auth.ts), and the cap is sized so
// that the flood the stage and WAF let through cannot fill it (docs/DEPLOY.md, "Logins under a flood").
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { AUTHORIZER_IDENTITY, FUNCTION_SETTINGS } from '../../functions/routes.ts';

export class AuthorizerEmulator {
  private readonly cache = new Map<string, { result: APIGatewayAuthorizerResult; expiresAt: number }>();
  private inFlight = 0;
  /** The result cache TTL in force: the deployed default unless the run sets another. */
  readonly cacheTtlSeconds: number;
  private readonly cacheTtlMs: number;
  private readonly concurrency: number;

  constructor(cacheTtlSeconds: number = AUTHORIZER_IDENTITY.defaultCacheTtlSeconds, concurrency: number = FUNCTION_SETTINGS.authorizer.reservedConcurrency) {
    this.cacheTtlSeconds = cacheTtlSeconds;
    this.cacheTtlMs = cacheTtlSeconds * 1000;
    this.concurrency = concurrency;
  }

  /** API Gateway's cached result for this identity source, if still valid. */
  cached(identitySource: string): APIGatewayAuthorizerResult | undefined {
    const entry = this.cache.get(identitySource);
    return entry && entry.expiresAt > Date.now() ? entry.result : undefined;
  }

  remember(identitySource: string, result: APIGatewayAuthorizerResult): void {
    if (this.cacheTtlMs > 0) this.cache.set(identitySource, { result, expiresAt: Date.now() + this.cacheTtlMs });
  }

  /**
   * Takes one of the reserved invocations, or returns undefined when all are taken (throttled). The
   * returned function frees it; call it when the authorizer itself finishes, not when its timeout
   * answers: a timed-out invocation still runs (and still counts, as in Lambda).
   */
  startInvocation(): (() => void) | undefined {
    if (this.inFlight >= this.concurrency) return undefined;
    this.inFlight++;
    let freed = false;
    return () => {
      if (!freed) this.inFlight--;
      freed = true;
    };
  }
}
