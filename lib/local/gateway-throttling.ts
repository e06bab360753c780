// API Gateway's stage method throttling, locally: a token bucket per method (rate: tokens per
// second, burst: the bucket's size, full at start), checked before anything else runs (the
// authorizer included); an empty bucket is THROTTLED, a 429 with Retry-After. The limits are the
// ones the stack deploys (METHOD_THROTTLING, functions/routes.ts): the routes' methods share the
// authenticated limit each, every other method (index, documents, OPTIONS, 405) the
// unauthenticated one.
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html
// ("API Gateway throttles requests to your API using the token bucket algorithm"; "per-API,
// per-stage throttling limits are applied at the API method level for a stage").
import { matchRoute, METHOD_THROTTLING } from '../../functions/routes.ts';

export interface Throttle {
  rateLimit: number;
  burstLimit: number;
}

export interface MethodThrottleLimits {
  authenticated: Throttle;
  unauthenticated: Throttle;
}

class TokenBucket {
  private tokens: number;
  private updatedAt = performance.now();
  private readonly throttle: Throttle;

  constructor(throttle: Throttle) {
    this.throttle = throttle;
    this.tokens = throttle.burstLimit;
  }

  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.throttle.burstLimit, this.tokens + ((now - this.updatedAt) / 1000) * this.throttle.rateLimit);
    this.updatedAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export class MethodThrottling {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly limits: MethodThrottleLimits;

  constructor(limits: MethodThrottleLimits) {
    this.limits = limits;
  }

  /**
   * Whether a request for `method` on `path` (below the base path) may pass. A route's method is
   * one API Gateway method whatever its path parameters; a method a resource lacks is its ANY mock.
   */
  admit(method: string, path: string): boolean {
    const match = matchRoute(method, path || '/');
    const key = match.route
      ? `${method} ${match.route.path}`
      : `${match.allowedMethods.length > 0 && method !== 'OPTIONS' ? 'ANY' : method} ${path}`;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket(match.route ? this.limits.authenticated : this.limits.unauthenticated);
      this.buckets.set(key, bucket);
    }
    return bucket.take();
  }
}

/**
 * The deployed production limits, or, with MUSEUM_THROTTLE_RATE_LIMIT and MUSEUM_THROTTLE_BURST_LIMIT,
 * those for every method (the local counterpart of the stack's `-c throttleRateLimit=…`; the test
 * harness raises them for the suites that measure something else than throttling).
 */
export function localThrottleLimits(environment: NodeJS.ProcessEnv = process.env): MethodThrottleLimits {
  const rate = environment.MUSEUM_THROTTLE_RATE_LIMIT || undefined;
  const burst = environment.MUSEUM_THROTTLE_BURST_LIMIT || undefined;
  if (rate === undefined && burst === undefined)
    return { authenticated: METHOD_THROTTLING.authenticated.production, unauthenticated: METHOD_THROTTLING.unauthenticated };
  const rateLimit = Number(rate);
  const burstLimit = Number(burst);
  if (!(rateLimit > 0) || !Number.isInteger(burstLimit) || burstLimit < 1) {
    throw new Error(
      `MUSEUM_THROTTLE_RATE_LIMIT and MUSEUM_THROTTLE_BURST_LIMIT must be set together: requests per second (> 0) and a burst (an integer >= 1), not "${rate}" and "${burst}"`,
    );
  }
  return { authenticated: { rateLimit, burstLimit }, unauthenticated: { rateLimit, burstLimit } };
}
