// Throttling as the synthesized templates deploy it, read the way API Gateway applies it: per
// method ("per-API, per-stage throttling limits are applied at the API method level for a stage",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html),
// each method with its own method setting or else the stage's default (`/*/*`).
// - Production serves traffic: each authenticated method at least 500 requests/s, burst 100, and
//   the authorizer (at most 512 MB) reserves the environments a flood of new credentials at all
//   those limits keeps busy (authorizerEnvironments() in functions/deployment.ts): the sustained rates
//   and each method's burst within one second, at the seconds of one check each.
// - The methods without credentials (preflights, documents, the service index, 405 answers) have
//   at least the limits of the authenticated ones: every visitor of a site shares each bucket. What
//   a flood of them costs is bounded per client by the WAF's rate-based rule on every request and
//   watched by a monthly cost budget notifying the alarm topic.
// - The mock API (no credentials, no WAF) costs at most its stated ceiling
//   ($3.50 per million REST requests, https://aws.amazon.com/api-gateway/pricing/).
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { authenticatedMethods } from '../../functions/routes.ts';
import { authorizerEnvironments, FUNCTION_SETTINGS } from '../../functions/deployment.ts';
import { COST_BUDGET_THRESHOLDS } from '../../lib/cdk/cost-budget.ts';
import { FIREWALL_RULES } from '../../lib/cdk/api-firewall.ts';
import { MONTHLY_COST_BUDGET_USD, WAF_RATE_LIMIT_PER_5_MINUTES } from '../../lib/cdk/stage-config.ts';
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

/** What the mock API (no credentials, no WAF) may cost in a month at its throttle ceiling. */
const MOCK_API_MONTHLY_CEILING_USD = 100;

/** API Gateway REST API requests, first price tier (https://aws.amazon.com/api-gateway/pricing/): $3.50 per million. */
const REST_API_USD_PER_MILLION_REQUESTS = 3.5;

/**
 * The seconds of one credential check the authorizer is sized with, read from
 * authorizerEnvironments(): the environments PROBE_RATE requests/s on every authenticated method
 * keep busy, per request. Its rounding up adds under a millionth of a second, never less.
 */
const PROBE_RATE = 1e6;
const secondsPerVerification =
  authorizerEnvironments({ rateLimit: PROBE_RATE, burstLimit: 0 }) / (authenticatedMethods().length * PROBE_RATE);

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
    const busy = sum(authenticated.map((method) => (method.rateLimit + method.burstLimit) * secondsPerVerification));
    expect(busy).toBeLessThanOrEqual(reserved);
    // The check is a keyed hash and one GetItem: tens of milliseconds at most, with margin.
    expect(secondsPerVerification).toBeGreaterThan(0);
    expect(secondsPerVerification).toBeLessThanOrEqual(0.05);
  });

  test('the authorizer has at most 512 MB, as FUNCTION_SETTINGS says', () => {
    expect(authorizerFunction(apiTemplate).memorySize).toBe(FUNCTION_SETTINGS.authorizer.memorySize);
    expect(authorizerFunction(apiTemplate).memorySize).toBeLessThanOrEqual(512);
  });

  test('each method without credentials (OPTIONS, documents, index, 405) has at least the limits of every authenticated method', () => {
    expect(unauthenticated.map((method) => method.method)).toEqual(
      expect.arrayContaining([
        'OPTIONS /v1.1/special-events',
        'GET /v1.1/openapi.json',
        'GET /v1.1/docs',
        'GET /v1.1',
        'ANY /v1.1/special-events',
      ]),
    );
    const rate = Math.max(...authenticated.map((method) => method.rateLimit));
    const burst = Math.max(...authenticated.map((method) => method.burstLimit));
    for (const method of unauthenticated) {
      expect({ method: method.method, rateLimit: method.rateLimit >= rate, burstLimit: method.burstLimit >= burst }).toEqual({
        method: method.method,
        rateLimit: true,
        burstLimit: true,
      });
    }
  });

  test(`the mock API, which checks no credentials and has no WAF, costs at most $${MOCK_API_MONTHLY_CEILING_USD} a month at its ceiling`, () => {
    const mock = methodThrottles(mockTemplate);
    expect(mock.length).toBeGreaterThan(0);
    expect(monthlyCostUsd(mock)).toBeLessThanOrEqual(MOCK_API_MONTHLY_CEILING_USD);
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

test('production preflights, documents and 405 answers have 500 requests/s or more with a burst of 100 or more, each', () => {
  const methods = methodThrottles(synthesize({ stage: 'prod', corsOrigins: 'https://museum.example' }).apiTemplate).filter(
    (method) => method.authorization === 'NONE',
  );
  expect(methods.some((method) => method.method === 'OPTIONS /v1.1/{proxy+}')).toBe(true);
  for (const method of methods) {
    expect({ method: method.method, rateLimit: method.rateLimit >= 500, burstLimit: method.burstLimit >= 100 }).toEqual({
      method: method.method,
      rateLimit: true,
      burstLimit: true,
    });
  }
});

test("production's web ACL limits every request per client address, those without credentials included (no scope-down)", () => {
  const rules = Object.values(synthesize({ stage: 'prod' }).apiTemplate.findResources('AWS::WAFv2::WebACL')).flatMap(
    (acl) =>
      (acl as { Properties: { Rules: { Name: string; Action?: object; Statement: Record<string, Record<string, unknown>> }[] } }).Properties
        .Rules,
  );
  const perAddress = rules.find((rule) => rule.Name === FIREWALL_RULES.rateLimit);
  expect(perAddress?.Action).toEqual({ Block: {} });
  const statement = perAddress?.Statement.RateBasedStatement;
  expect(statement).toMatchObject({ AggregateKeyType: 'IP', Limit: WAF_RATE_LIMIT_PER_5_MINUTES });
  expect(statement).not.toHaveProperty('ScopeDownStatement');
});

test('production has a monthly cost budget that notifies the alarm topic, which lets AWS Budgets publish', () => {
  const template = synthesize({ stage: 'prod', alarmEmail: 'ops@museum.example' }).apiTemplate;
  const topics = Object.keys(template.findResources('AWS::SNS::Topic'));
  expect(topics).toHaveLength(1);
  template.hasResourceProperties('AWS::Budgets::Budget', {
    Budget: { BudgetType: 'COST', TimeUnit: 'MONTHLY', BudgetLimit: { Amount: MONTHLY_COST_BUDGET_USD, Unit: 'USD' } },
    NotificationsWithSubscribers: COST_BUDGET_THRESHOLDS.map(({ notificationType, threshold }) => ({
      Notification: Match.objectLike({ NotificationType: notificationType, Threshold: threshold, ThresholdType: 'PERCENTAGE' }),
      Subscribers: [{ SubscriptionType: 'SNS', Address: { Ref: topics[0] } }],
    })),
  });
  template.hasResourceProperties('AWS::SNS::TopicPolicy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        Match.objectLike({ Effect: 'Allow', Principal: { Service: 'budgets.amazonaws.com' }, Action: 'sns:Publish' }),
      ]),
    },
  });
  expect(Object.keys(synthesize({ stage: 'pr-7' }).apiTemplate.findResources('AWS::Budgets::Budget'))).toHaveLength(0);
});

test('a stage throttle the authorizer cannot keep up with is refused at synthesis', () => {
  expect(() => synthesize({ stage: 'pr-8', throttleRateLimit: '5000' })).toThrow(/reservedConcurrency/);
  expect(() => synthesize({ stage: 'pr-8', throttleRateLimit: '500', throttleBurstLimit: '5000' })).toThrow(/reservedConcurrency/);
});
