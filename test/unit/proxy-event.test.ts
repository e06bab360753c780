// The parts of API Gateway's proxy event the local gateway builds, in-process: the authorizer
// context (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-lambda-authorizer-output.html)
// and a proxy integration's headers (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html).
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { authorizerContext, integrationHeaders } from '../../lib/local/proxy-event.ts';

const result = (context: Record<string, unknown>) =>
  ({ principalId: 'ada', policyDocument: { Version: '2012-10-17', Statement: [] }, context }) as unknown as APIGatewayAuthorizerResult;

test('authorizer context values reach the integration as strings, with the principal id', () => {
  expect(authorizerContext(result({ role: 'editor', level: 3, admin: false }))).toEqual({
    principalId: 'ada',
    role: 'editor',
    level: '3',
    admin: 'false',
  });
});

test.each([[{ roles: ['editor'] }], [{ user: { name: 'ada' } }]])(
  'an authorizer context holding an object or array (%j) is refused, as API Gateway refuses it',
  (context) => {
    expect(authorizerContext(result(context))).toBeUndefined();
  },
);

test('a proxy answer without Content-Type gets application/json; one with it keeps its own', () => {
  expect(integrationHeaders({ statusCode: 204, headers: { ETag: '"1"' }, body: '' })).toEqual({
    ETag: '"1"',
    'Content-Type': 'application/json',
  });
  expect(integrationHeaders({ statusCode: 200, headers: { 'content-type': 'application/problem+json' }, body: '{}' })).toEqual({
    'content-type': 'application/problem+json',
  });
});
