// The authorizer's policy must cover every route the role allows (API Gateway caches it per
// Authorization header and reuses it for every route), and nothing more.
import { allowedResources } from '../../functions/authorizer.ts';
import { policyAllows } from '../../lib/local/gateway-authorization.ts';

const stageArn = 'arn:aws:execute-api:eu-west-1:123456789012:abcdef1234/prod';

function allows(resources: string[], arn: string): boolean {
  return policyAllows(
    {
      principalId: 'u',
      policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resources }] },
    },
    arn,
  );
}

describe('authorizer policy', () => {
  test('a viewer may call the three reads and manage its calendar feeds, whichever route was called first, and no event writes', () => {
    const resources = allowedResources(`${stageArn}/POST/special-events`, '/special-events', 'viewer');
    // HEAD is its own method in API Gateway, served by the GET route's function. The calendar's
    // address (authorization NONE) is no method of the authorizer's policy.
    expect(resources.sort()).toEqual([
      `${stageArn}/DELETE/calendar-feeds/*`,
      `${stageArn}/GET/calendar-feeds`,
      `${stageArn}/GET/special-events`,
      `${stageArn}/GET/special-events/*`,
      `${stageArn}/GET/special-events/changes`,
      `${stageArn}/HEAD/calendar-feeds`,
      `${stageArn}/HEAD/special-events`,
      `${stageArn}/HEAD/special-events/*`,
      `${stageArn}/HEAD/special-events/changes`,
      `${stageArn}/POST/calendar-feeds`,
    ]);
    expect(resources.some((arn) => arn.includes('calendar.ics'))).toBe(false);
    expect(allows(resources, `${stageArn}/GET/special-events/6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90`)).toBe(true);
    expect(allows(resources, `${stageArn}/DELETE/special-events/6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90`)).toBe(false);
  });

  test('an editor may call every operation behind the authorizer (and HEAD wherever GET is)', () => {
    const resources = allowedResources(`${stageArn}/GET/special-events`, '/special-events', 'editor');
    expect(resources).toHaveLength(24);
    for (const arn of [
      'POST/special-events',
      'GET/special-events',
      'HEAD/special-events',
      'GET/special-events/x',
      'HEAD/special-events/x',
      'PATCH/special-events/x',
      'DELETE/special-events/x',
      'GET/special-events/changes',
      'HEAD/special-events/changes',
    ]) {
      expect(allows(resources, `${stageArn}/${arn}`)).toBe(true);
    }
  });

  test('a resource prefix in front of the routes (a /v1.1 resource) is carried into the policy', () => {
    const resources = allowedResources(`${stageArn}/GET/v1.1/special-events/abc`, '/v1.1/special-events/{eventId}', 'viewer');
    expect(allows(resources, `${stageArn}/GET/v1.1/special-events`)).toBe(true);
    expect(allows(resources, `${stageArn}/GET/special-events`)).toBe(false);
  });

  test('an explicit Deny wins over an Allow', () => {
    expect(
      policyAllows(
        {
          principalId: 'u',
          policyDocument: {
            Version: '2012-10-17',
            Statement: [
              { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: `${stageArn}/*` },
              { Action: 'execute-api:Invoke', Effect: 'Deny', Resource: `${stageArn}/DELETE/*` },
            ],
          },
        },
        `${stageArn}/DELETE/special-events/x`,
      ),
    ).toBe(false);
  });
});
