// The authorizer's identity source and result cache TTL, read from the synthesized stack, are what
// the local gateway applies: both sides take them from one definition (AUTHORIZER_IDENTITY in
// functions/unrouted-functions.ts). API Gateway keys the cache by the identity source and answers 401 without
// calling the authorizer when it is missing
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-use-lambda-authorizer.html).
import { AuthorizerStandIn } from '../../lib/local/authorizer-stand-in.ts';
import { identitySource } from '../../lib/local/proxy-event.ts';
import { resourcesOfType, synthesize } from './synthesize.ts';

function deployedAuthorizer(context: Record<string, string> = {}): { IdentitySource: string; AuthorizerResultTtlInSeconds: number } {
  const authorizers = Object.values(resourcesOfType(synthesize(context).apiTemplate, 'AWS::ApiGateway::Authorizer'));
  expect(authorizers).toHaveLength(1);
  return authorizers[0]?.Properties as { IdentitySource: string; AuthorizerResultTtlInSeconds: number };
}

test('the local gateway reads the identity source the deployed authorizer names, whatever the header case, the last line winning', () => {
  const { IdentitySource } = deployedAuthorizer();
  const header = /^method\.request\.header\.([A-Za-z0-9-]+)$/.exec(IdentitySource)?.[1];
  if (!header) throw new Error(`The deployed identity source is not one header: ${IdentitySource}`);
  expect(
    identitySource({ rawHeaders: ['Accept', 'application/json', header.toLowerCase(), 'Basic first', header.toUpperCase(), 'Basic last'] }),
  ).toBe('Basic last');
  // Without that header the local gateway has no identity source, and answers 401 before the authorizer.
  expect(identitySource({ rawHeaders: ['Accept', 'application/json', 'Proxy-Authorization', 'Basic x'] })).toBeUndefined();
});

test("the local gateway's default authorizer cache TTL is the deployed stack's default", () => {
  const { AuthorizerResultTtlInSeconds } = deployedAuthorizer();
  expect(new AuthorizerStandIn().cacheTtlSeconds).toBe(AuthorizerResultTtlInSeconds);
  expect(AuthorizerResultTtlInSeconds).toBeGreaterThan(0);
});

test('a stage that sets authorizerCacheTtlSeconds deploys that TTL, as AUTHORIZER_CACHE_TTL_SECONDS sets it locally', () => {
  expect(deployedAuthorizer({ authorizerCacheTtlSeconds: '60' }).AuthorizerResultTtlInSeconds).toBe(60);
  expect(new AuthorizerStandIn(60).cacheTtlSeconds).toBe(60);
});
