// Throttling as the synthesized templates deploy it, read the way API Gateway applies it: per
// method ("per-API, per-stage throttling limits are applied at the API method level for a stage",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html),
// each method with its own method setting or else the stage's default (`/*/*`).
// - Production serves traffic: each authenticated method at least 500 requests/s, burst 100, and
//   the authorizer (at most 512 MB) reserves the environments a flood of new credentials at all
//   those limits keeps busy (authorizerEnvironments() in functions/routes.ts): the sustained rates
//   and each method's burst within one second, at AUTHORIZER_SECONDS_PER_VERIFICATION each.
// - The methods without credentials (and the whole mock API) cost at most the stated monthly
//   budget at their ceiling ($3.50 per million REST requests, https://aws.amazon.com/api-gateway/pricing/).
import type { Template } from 'aws-cdk-lib/assertions';
import {
  AUTHORIZER_SECONDS_PER_VERIFICATION,
  authenticatedMethods,
  FUNCTION_SETTINGS,
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

function authorizerFunction(template: Template): { reserved: number; memorySize: number } {
  const functions = Object.values(template.findResources('AWS::Lambda::Function')) as {
    Properties: { ReservedConcurrentExecutions?: number; MemorySize: number; Description?: string };
  }[];
  const authorizer = functions.filter((fn) => fn.Properties.Description?.includes('authorizer'));
  expect(authorizer).toHaveLength(1);
  const reserved = authorizer[0]?.Properties.ReservedConcurrentExecutions;
  if (reserved === undefined) throw new Error('The authorizer has no reserved concurrency');
  return { reserved, memorySize: authorizer[0]?.Properties.MemorySize ?? Infinity };
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

  test("a flood of new credentials at every authenticated method's limit, bursts included, fits the authorizer's reserved concurrency (429 before 503)", () => {
    const { reserved } = authorizerFunction(apiTemplate);
    // Each new credential holds an environment for one check (Little's law): the sustained rates,
    // plus every method's burst arriving within the same second.
    const busy = sum(authenticated.map((method) => (method.rateLimit + method.burstLimit) * AUTHORIZER_SECONDS_PER_VERIFICATION));
    expect(busy).toBeLessThanOrEqual(reserved);
    // The check is a keyed hash and one GetItem: tens of milliseconds at most, with margin.
    expect(AUTHORIZER_SECONDS_PER_VERIFICATION).toBeLessThanOrEqual(0.05);
  });

  test('the authorizer has at most 512 MB, as FUNCTION_SETTINGS says', () => {
    expect(authorizerFunction(apiTemplate).memorySize).toBe(FUNCTION_SETTINGS.authorizer.memorySize);
    expect(authorizerFunction(apiTemplate).memorySize).toBeLessThanOrEqual(512);
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

test('production throttles each authenticated method at 500 requests/s or more with a burst of 100 or more', () => {
  const methods = methodThrottles(synthesize({ stage: 'prod' }).apiTemplate).filter((method) => method.authorization === 'CUSTOM');
  expect(methods.map((method) => method.method.replace('/v1.1', '')).sort()).toEqual(authenticatedMethods().sort());
  for (const method of methods) {
    expect({ method: method.method, rateLimit: method.rateLimit >= 500, burstLimit: method.burstLimit >= 100 }).toEqual({
      method: method.method,
      rateLimit: true,
      burstLimit: true,
    });
  }
});

test('a stage throttle the authorizer cannot keep up with is refused at synthesis', () => {
  expect(() => synthesize({ stage: 'pr-8', throttleRateLimit: '5000' })).toThrow(/reservedConcurrency/);
  expect(() => synthesize({ stage: 'pr-8', throttleRateLimit: '500', throttleBurstLimit: '5000' })).toThrow(/reservedConcurrency/);
});
