// Context -> stage configuration: production by default, previews cheaper and disposable, and
// bad values refused at synthesis rather than at deployment.
import { METHOD_THROTTLING } from '../../functions/deployment.ts';
import { readStageConfig, WAF_CREDENTIAL_RATE_LIMIT_PER_5_MINUTES, WAF_RATE_LIMIT_PER_5_MINUTES } from '../../lib/cdk/stage-config.ts';

const context = (values: Record<string, unknown>) => ({ tryGetContext: (key: string) => values[key] });

test('without context the stage is production: monitoring and WAF on, higher throttling, 90-day logs, 300 s authorizer cache', () => {
  expect(readStageConfig(context({}))).toMatchObject({
    stage: 'prod',
    isProduction: true,
    monitoring: true,
    throttle: METHOD_THROTTLING.api.production,
    logRetentionDays: 90,
    authorizerCacheTtlSeconds: 300,
    corsOrigins: [],
    timeZone: 'UTC',
    waf: true,
    wafRateLimitPer5Minutes: WAF_RATE_LIMIT_PER_5_MINUTES,
    wafCredentialRateLimitPer5Minutes: WAF_CREDENTIAL_RATE_LIMIT_PER_5_MINUTES,
    alarmEmail: undefined,
    alarmTopicArn: undefined,
  });
  expect(readStageConfig(context({ waf: 'false' })).waf).toBe(false);
});

test('any other stage is a preview: lower throttling, 7-day logs, no alarms or WAF unless asked for', () => {
  expect(readStageConfig(context({ stage: 'pr-42' }))).toMatchObject({
    stage: 'pr-42',
    isProduction: false,
    monitoring: false,
    waf: false,
    throttle: METHOD_THROTTLING.api.preview,
    logRetentionDays: 7,
  });
  expect(readStageConfig(context({ stage: 'pr-42', monitoring: 'true' })).monitoring).toBe(true);
});

test('command-line strings are parsed: numbers, booleans, comma-separated origins', () => {
  const config = readStageConfig(
    context({
      throttleRateLimit: '4',
      waf: 'true',
      corsOrigins: 'https://museum.example, https://shop.museum.example',
      timeZone: 'Europe/Paris',
    }),
  );
  expect(config).toMatchObject({ throttle: { rateLimit: 4 }, waf: true, timeZone: 'Europe/Paris' });
  expect(config.corsOrigins).toEqual(['https://museum.example', 'https://shop.museum.example']);
});

test.each([
  [{ stage: 'PR_42' }, /stage/],
  [{ stage: 'pr.42' }, /stage/],
  [{ throttleRateLimit: 'fast' }, /throttleRateLimit/],
  [{ throttleRateLimit: '5000' }, /reservedConcurrency/],
  [{ wafCredentialRateLimitPer5Minutes: '5' }, /wafCredentialRateLimitPer5Minutes/],
  [{ waf: 'yes' }, /waf/],
  [{ corsOrigins: '*' }, /corsOrigins/],
  [{ authorizerCacheTtlSeconds: '7200' }, /3600/],
  [{ logRetentionDays: '10' }, /logRetentionDays/],
  [{ domainName: 'api.museum.example' }, /certificateArn/],
  [{ alarmEmail: 'ops' }, /alarmEmail/],
  [{ alarmTopicArn: 'museum-ops' }, /alarmTopicArn/],
  [{ wafRateLimitPer5Minutes: '5' }, /wafRateLimitPer5Minutes/],
  [{ monthlyCostBudgetUsd: '0' }, /monthlyCostBudgetUsd/],
])('refuses %j', (values, message) => {
  expect(() => readStageConfig(context(values))).toThrow(message);
});

test('the release is a commit id or tag, and absent unless given', () => {
  expect(readStageConfig(context({})).release).toBeUndefined();
  expect(readStageConfig(context({ release: '0123456789abcdef0123456789abcdef01234567' })).release).toBe(
    '0123456789abcdef0123456789abcdef01234567',
  );
  expect(() => readStageConfig(context({ release: 'a b' }))).toThrow(/commit id or tag/);
});
