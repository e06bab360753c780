// API Gateway's stage method throttling, locally: a token bucket per API Gateway METHOD as the
// stack deploys them (rate: tokens per second, burst: the bucket's size, full at start), checked
// before anything else runs (the authorizer included); an empty bucket is THROTTLED, a 429 with
// Retry-After. The limits are the ones the stack deploys (METHOD_THROTTLING.api, functions/deployment.ts,
// as the stage's default method setting): the same for every method, the routes' and those without
// credentials (index, documents, OPTIONS, 405, the unknown-path mocks) alike.
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html
// ("API Gateway throttles requests to your API using the token bucket algorithm"; "per-API,
// per-stage throttling limits are applied at the API method level for a stage").
// A bucket belongs to a method (resource path template and HTTP method, `GET /special-events/{eventId}`),
// never to a concrete path: the set of buckets is the stack's set of methods, whatever paths
// clients send. A path no method answers (without CORS, an unknown path is API Gateway's
// MISSING_AUTHENTICATION_TOKEN gateway response) has no method and so no method throttle.
import { matchRoute } from '../../functions/route-matching.ts';
import { METHOD_THROTTLING } from '../../functions/deployment.ts';

export interface Throttle {
  rateLimit: number;
  burstLimit: number;
}

/** Below the base path: the resource lib/cdk/api-documents.ts adds for unknown paths when CORS is on. */
export const UNKNOWN_PATH_RESOURCE = '/{proxy+}';

/** What decides which methods an API has besides the routes' (lib/cdk/special-events-api.ts). */
export interface ApiResources {
  /** The document resources (PUBLIC_DOCUMENT_PATHS, lib/openapi/public-documents.ts): GET, HEAD, OPTIONS and ANY each. */
  documentPaths: readonly string[];
  /** CORS is on, so the API has the `/{proxy+}` mocks (OPTIONS and ANY) and unknown paths have a method. */
  unknownPaths: boolean;
}

/**
 * The method that answers `method` on `resourcePath` (below the base path, without a trailing
 * slash) in the deployed stack, as `HTTP-METHOD /resource/{template}` (lib/cdk/special-events-api.ts and api-documents.ts): a route's
 * method; a document's GET, HEAD or OPTIONS, or its ANY (405); a route resource's OPTIONS or ANY
 * (405); with CORS on, the OPTIONS or ANY of `/{proxy+}`; otherwise none.
 */
export function apiGatewayMethod(method: string, resourcePath: string, api: ApiResources): string | undefined {
  const own = (resource: string, methods: readonly string[]) => `${methods.includes(method) ? method : 'ANY'} ${resource}`;
  if (api.documentPaths.includes(resourcePath)) return own(resourcePath, ['GET', 'HEAD', 'OPTIONS']);
  const match = matchRoute(method, resourcePath || '/');
  if (match.route) return `${method} ${match.route.path}`;
  const [resourceMethod] = match.allowedMethods;
  if (resourceMethod) {
    // Any method of the resource matches the same route path: its template names the resource.
    const resource = matchRoute(resourceMethod, resourcePath).route?.path ?? resourcePath;
    return own(resource, ['OPTIONS']);
  }
  if (api.unknownPaths && resourcePath !== '') return own(UNKNOWN_PATH_RESOURCE, ['OPTIONS']);
  return undefined;
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
  private readonly throttle: Throttle;
  private readonly api: ApiResources;

  /** `throttle`: each method's rate and burst, as the stage's default method setting gives every method. */
  constructor(throttle: Throttle, api: ApiResources) {
    this.throttle = throttle;
    this.api = api;
  }

  /** Whether a request for `method` on `resourcePath` (below the base path) may pass its method's bucket. */
  admit(method: string, resourcePath: string): boolean {
    const apiMethod = apiGatewayMethod(method, resourcePath, this.api);
    if (!apiMethod) return true;
    let bucket = this.buckets.get(apiMethod);
    if (!bucket) {
      bucket = new TokenBucket(this.throttle);
      this.buckets.set(apiMethod, bucket);
    }
    return bucket.take();
  }
}

/**
 * The deployed production limits, or, with MUSEUM_THROTTLE_RATE_LIMIT and MUSEUM_THROTTLE_BURST_LIMIT,
 * those for every method (the local counterpart of the stack's `-c throttleRateLimit=…`; the test
 * harness raises them for the suites that measure something else than throttling).
 */
export function localThrottleLimits(environment: NodeJS.ProcessEnv = process.env): Throttle {
  const rate = environment.MUSEUM_THROTTLE_RATE_LIMIT || undefined;
  const burst = environment.MUSEUM_THROTTLE_BURST_LIMIT || undefined;
  if (rate === undefined && burst === undefined) return METHOD_THROTTLING.api.production;
  const rateLimit = Number(rate);
  const burstLimit = Number(burst);
  if (!(rateLimit > 0) || !Number.isInteger(burstLimit) || burstLimit < 1) {
    throw new Error(
      `MUSEUM_THROTTLE_RATE_LIMIT and MUSEUM_THROTTLE_BURST_LIMIT must be set together: requests per second (> 0) and a burst (an integer >= 1), not "${rate}" and "${burst}"`,
    );
  }
  return { rateLimit, burstLimit };
}
