// How the API is deployed, read by the CDK stack (lib/cdk/) and the local run (lib/local/) alike:
// API Gateway's method throttling, the Lambda settings of every function (memory, timeout, the
// authorizer's reservation), X-Ray tracing on the stage and NODE_OPTIONS. What the API is (paths,
// methods, roles, handlers, grants) is the route table's, functions/routes.ts. It lives in
// functions/ because the deployed code relies on one of these facts: the change feed's hold-back
// is a handler's timeout (functions/changes/change-feed.ts), and functions/ imports nothing of lib/.
import { authenticatedMethods } from './routes.ts';

/**
 * How long one new credential holds an authorizer environment, on average, with margin: an
 * HMAC-SHA-256 of the password (microseconds of CPU) and one GetItem of the user (~5-10 ms in the
 * region; docs/PERFORMANCE.md, "Memory size"), Lambda's own overhead, and 2.5x margin for slower
 * reads. A cold start (the bundle and a cached Secrets Manager read, a few hundred ms) happens
 * once per environment, not per check: at a steady rate the environments are warm.
 */
const AUTHORIZER_SECONDS_PER_VERIFICATION = 0.025;

/**
 * API Gateway method throttling (requests per second and burst), which API Gateway applies PER
 * METHOD: each method of a stage has its own token bucket ("per-API, per-stage throttling limits
 * are applied at the API method level for a stage",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html).
 * The CDK stack deploys these numbers (the stage's default method setting) and the local gateway
 * enforces them.
 * - api: every method of the API, behind the authorizer or not, sized to traffic: 500 requests/s
 *   each, burst 100 (previews lower). The methods without credentials (the service index, the
 *   documents, OPTIONS, the 405 answers) get the same: a browser sends a preflight before each
 *   credentialed cross-origin request it has not cached, and every visitor of a site shares each
 *   method's bucket. What a flood of them may cost is bounded per client by the WAF's rate-based
 *   rule and watched by the cost budget (lib/cdk/api-firewall.ts, api-monitoring.ts), not by a
 *   bucket every visitor shares. API Gateway's account limit, 10,000 requests/s per region, is
 *   shared by every method of every API of the account. The authorizer is sized to the
 *   authenticated methods (authorizerEnvironments()), not the other way round.
 * - mock: each method of the mock deployment (no credentials checked, no WAF), sized so that it
 *   costs at most $100 a month at its ceiling (test/infra/throttling.test.ts).
 */
export const METHOD_THROTTLING = {
  api: { production: { rateLimit: 500, burstLimit: 100 }, preview: { rateLimit: 5, burstLimit: 5 } },
  // Every mock method at this rate stays within $100 a month (26 methods today:
  // test/infra/throttling.test.ts sums them from the template).
  mock: { rateLimit: 0.4, burstLimit: 10 },
} as const;

/**
 * The authorizer environments a flood of new (or wrong) credentials keeps busy when every
 * authenticated method is at `throttle`: each request that passes a method's bucket costs one
 * check of AUTHORIZER_SECONDS_PER_VERIFICATION, and Lambda runs one invocation per environment
 * (https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html). Little's law: the
 * sustained rates x the time of a check, plus each method's full burst arriving within the same
 * second ((rate + burst) x seconds per check, summed over the methods). A burst arriving faster
 * than one check (all of it within ~25 ms) can exceed it; the excess is a 503 with Retry-After
 * (AUTHORIZER_FAILURE), which the client's documented retry absorbs.
 */
export function authorizerEnvironments(throttle: { rateLimit: number; burstLimit: number }): number {
  return Math.ceil(authenticatedMethods().length * (throttle.rateLimit + throttle.burstLimit) * AUTHORIZER_SECONDS_PER_VERIFICATION);
}

/**
 * Lambda settings shared by the CDK stack and the local run, which enforces them (memory, timeout
 * and reserved concurrency: lib/local/lambda-runtime.ts). Memory chosen from `npm run bench`
 * (docs/PERFORMANCE.md, "Memory size").
 */
export const FUNCTION_SETTINGS = {
  // Halves the CPU-bound part of cold starts and calls against 512 MB for ~$0.03 more per million requests.
  handler: { memorySize: 1024, timeoutSeconds: 10 },
  // A check is one keyed hash and one GetItem: waiting on DynamoDB, which memory does not speed
  // up; 512 MB keeps the CPU-bound cold start short. reservedConcurrency holds a flood of new
  // credentials at every authenticated method's production limit (authorizerEnvironments()), and
  // bounds what it costs and what it takes from the account's concurrency, which the handlers share.
  authorizer: {
    memorySize: 512,
    timeoutSeconds: 10,
    reservedConcurrency: authorizerEnvironments(METHOD_THROTTLING.api.production),
  },
  // A batch of one stream shard's records: a Query and a few SendMessageBatch calls.
  webhookConsumer: { memorySize: 512, timeoutSeconds: 30 },
  // A batch of up to WEBHOOK_DELIVERY.batchSize messages, each attempt bounded by 10 s.
  webhookDelivery: { memorySize: 512, timeoutSeconds: 60 },
} as const;

/**
 * X-Ray tracing on the API's stage (lib/cdk/special-events-api.ts): API Gateway then passes
 * X-Amzn-Trace-Id on (https://docs.aws.amazon.com/xray/latest/devguide/xray-services-apigateway.html),
 * as the local gateway does (lib/local/proxy-event.ts).
 */
export const STAGE_TRACING_ENABLED = true;

/**
 * NODE_OPTIONS of every deployed function: the bundles ship their source maps, so stack traces in
 * the logs point at the TypeScript. The benchmark starts its cold starts with it too, since it is
 * part of what a cold start costs (Node reads each bundle's map when it loads it).
 */
export const LAMBDA_NODE_OPTIONS = '--enable-source-maps';
