// Throttling as the synthesized templates deploy it, read the way API Gateway applies it: per
// method ("per-API, per-stage throttling limits are applied at the API method level for a stage",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html),
// each method with its own method setting or else the stage's default (`/*/*`).
// - The authenticated methods together cannot bring more new credentials than the authorizer's
//   reserved concurrency verifies, so a client over the limit gets API Gateway's 429, never a
//   throttled authorizer's 503.
// - The methods without credentials (and the whole mock API) cost at most the stated monthly
//   budget at their ceiling ($3.50 per million REST requests, https://aws.amazon.com/api-gateway/pricing/).
import type { Template } from 'aws-cdk-lib/assertions';
import {
  AUTHORIZER_SECONDS_PER_VERIFICATION,
  authenticatedMethods,
  REST_API_USD_PER_MILLION_REQUESTS,
  UNAUTHENTICATED_MONTHLY_BUDGET_USD,
} from '../../functions/routes.ts';
import { synthesize } from './synthesize.ts';

interface Throttle {
  rateLimit: number;
  burstLimit: number;
}
interface MethodThrottle extends Throttle {
  method: string;
  authorization: string;
}

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** The longest month, so that the ceiling holds for every month. */
const SECONDS_PER_MONTH = 31 * 24 * 3600;

/** Every method of the template's API with the throttle API Gateway applies to it. */
function methodThrottles(template: Template): MethodThrottle[] {
  const resources = template.toJSON().Resources as Resources;
  const pathOf = (resourceId: unknown): string => {
    const ref = (resourceId as { Ref?: string }).Ref;
    if (!ref) return '/'; // Fn::GetAtt RootResourceId
    const resource = resources[ref]?.Properties as { PathPart: string; ParentId: unknown };
    const parent = pathOf(resource.ParentId);
    return `${parent === '/' ? '' : parent}/${resource.PathPart}`;
  };
  const stages = Object.values(resources).filter((resource) => resource.Type === 'AWS::ApiGateway::Stage');
  expect(stages).toHaveLength(1);
  const settings = (stages[0]?.Properties.MethodSettings ?? []) as {
    ResourcePath: string;
    HttpMethod: string;
    ThrottlingRateLimit?: number;
    ThrottlingBurstLimit?: number;
  }[];
  const throttleOf = (setting: (typeof settings)[number] | undefined): Throttle | undefined =>
    setting?.ThrottlingRateLimit === undefined || setting.ThrottlingBurstLimit === undefined
      ? undefined
      : { rateLimit: setting.ThrottlingRateLimit, burstLimit: setting.ThrottlingBurstLimit };
  const stageDefault = throttleOf(settings.find((setting) => setting.ResourcePath === '/*' && setting.HttpMethod === '*'));
  if (!stageDefault) throw new Error('The stage has no default throttle (/*/*)');
  return Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::ApiGateway::Method')
    .map((resource) => {
      const { HttpMethod, AuthorizationType, ResourceId } = resource.Properties as {
        HttpMethod: string;
        AuthorizationType: string;
        ResourceId: unknown;
      };
      const path = pathOf(ResourceId);
      // A method setting names its resource as `/` followed by the path with every / encoded as ~1
      // (AWS::ApiGateway::Stage MethodSetting ResourcePath: /resource/subresource is /~1resource~1subresource).
      const encoded = path === '/' ? '/' : `/${path.replaceAll('/', '~1')}`;
      const own = throttleOf(settings.find((setting) => setting.ResourcePath === encoded && setting.HttpMethod === HttpMethod));
      return { method: `${HttpMethod} ${path}`, authorization: AuthorizationType, ...(own ?? stageDefault) };
    });
}

function authorizerReservedConcurrency(template: Template): number {
  const functions = Object.values(template.findResources('AWS::Lambda::Function')) as {
    Properties: { ReservedConcurrentExecutions?: number; Description?: string };
  }[];
  const authorizer = functions.filter((fn) => fn.Properties.Description?.includes('authorizer'));
  expect(authorizer).toHaveLength(1);
  const reserved = authorizer[0]?.Properties.ReservedConcurrentExecutions;
  if (reserved === undefined) throw new Error('The authorizer has no reserved concurrency');
  return reserved;
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
const monthlyCostUsd = (throttles: Throttle[]) =>
  (sum(throttles.map((throttle) => throttle.rateLimit)) * SECONDS_PER_MONTH * REST_API_USD_PER_MILLION_REQUESTS) / 1e6;

describe.each([
  ['production', 'prod'],
  ['a preview', 'pr-7'],
])('%s', (_, stage) => {
  const { apiTemplate, mockTemplate } = synthesize({ stage });
  const methods = methodThrottles(apiTemplate);
  const authenticated = methods.filter((method) => method.authorization === 'CUSTOM');
  const unauthenticated = methods.filter((method) => method.authorization === 'NONE');

  test('every method is either behind the authorizer or without credentials, and the authorized ones are the routes', () => {
    expect(authenticated.length + unauthenticated.length).toBe(methods.length);
    expect(authenticated.map((method) => method.method.replace('/v1.1', '')).sort()).toEqual(authenticatedMethods().sort());
  });

  test('the authenticated methods, added up, bring no more new credentials than the authorizer reserved concurrency verifies (429 before 503)', () => {
    const reserved = authorizerReservedConcurrency(apiTemplate);
    // Steady state: each new credential holds an environment for one verification (Little's law).
    expect(sum(authenticated.map((method) => method.rateLimit)) * AUTHORIZER_SECONDS_PER_VERIFICATION).toBeLessThanOrEqual(reserved);
    // A burst arriving at once: one environment per request.
    expect(sum(authenticated.map((method) => method.burstLimit))).toBeLessThanOrEqual(reserved);
  });

  test(`the methods without credentials cost at most $${UNAUTHENTICATED_MONTHLY_BUDGET_USD} a month at their ceiling`, () => {
    expect(unauthenticated.length).toBeGreaterThan(0);
    expect(monthlyCostUsd(unauthenticated)).toBeLessThanOrEqual(UNAUTHENTICATED_MONTHLY_BUDGET_USD);
  });

  test(`the mock API, which checks no credentials, costs at most $${UNAUTHENTICATED_MONTHLY_BUDGET_USD} a month at its ceiling`, () => {
    const mock = methodThrottles(mockTemplate);
    expect(mock.length).toBeGreaterThan(0);
    expect(monthlyCostUsd(mock)).toBeLessThanOrEqual(UNAUTHENTICATED_MONTHLY_BUDGET_USD);
  });
});

test('a stage throttle the authorizer cannot keep up with is refused at synthesis', () => {
  expect(() => synthesize({ stage: 'pr-8', throttleRateLimit: '100' })).toThrow(/reservedConcurrency/);
  expect(() => synthesize({ stage: 'pr-8', throttleBurstLimit: '200' })).toThrow(/reservedConcurrency/);
});
