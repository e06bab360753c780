// The MuseumMockApi-<stage> stack: the five routes as API Gateway MOCK integrations with example
// bodies and real status codes, at a base path without /v1.1, with no Lambda and no table.
// Run by api-stack.test.ts on the preview it synthesizes anyway: each configuration of the app is
// synthesized once in the whole suite (synthesis is the slow part of the infrastructure tests).
import * as v from 'valibot';
import { ChangeFeedPage } from '../../lib/openapi/document-schemas.ts';
import { SpecialEvent } from '../../functions/events/event-schema.ts';
import { gatewayResponse } from '../../functions/http/gateway-responses.ts';
import { routeMethods, routes } from '../../functions/routes.ts';
import { mockAnswer, MOCK_STAGE_NAME } from '../../lib/cdk/museum-mock-api-stack.ts';
import { resourcePath, resourcesOfType, type Synthesized } from './synthesize.ts';

interface IntegrationResponse {
  StatusCode: string;
  SelectionPattern?: string;
  ResponseTemplates: Record<string, string>;
  ResponseParameters: Record<string, string>;
}

function mockMethods(preview: Synthesized) {
  return Object.values(resourcesOfType(preview.mockTemplate, 'AWS::ApiGateway::Method')).map((method) => {
    const properties = method.Properties as { HttpMethod: string; ResourceId: unknown; OperationName: string; Integration: any };
    return { ...properties, path: resourcePath(preview.mockTemplate, properties.ResourceId) };
  });
}

/** The mock stack's checks, on `synthesized()` (the preview synthesis, read once its beforeAll ran). */
export function mockStackChecks(synthesized: () => Synthesized): void {
  test('the mock stack has no Lambda function and no table', () => {
    synthesized().mockTemplate.resourceCountIs('AWS::Lambda::Function', 0);
    synthesized().mockTemplate.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
    synthesized().mockTemplate.resourceCountIs('AWS::DynamoDB::Table', 0);
  });

  test('it serves the five routes of the route table (and HEAD wherever GET is) at the root of its stage, without /v1.1', () => {
    const found = mockMethods(synthesized()).map((method) => `${method.HttpMethod} ${method.path}`);
    expect(found.sort()).toEqual(routes.flatMap((route) => routeMethods(route).map((method) => `${method} ${route.path}`)).sort());
    const outputs = synthesized().mockTemplate.toJSON().Outputs as Record<string, { Value: unknown }>;
    const url = JSON.stringify(outputs.MockApiBaseUrl?.Value);
    expect(url).toContain(`/${MOCK_STAGE_NAME}"`);
    expect(url).not.toContain('v1.1');
  });

  test.each(routes.map((route) => [route.operationId, route] as const))(
    '%s answers with its real success status and a realistic example, or 401 without Basic credentials',
    (operationId, route) => {
      const method = mockMethods(synthesized()).find((m) => m.OperationName === operationId);
      expect(method?.Integration.Type).toBe('MOCK');
      const responses = method?.Integration.IntegrationResponses as IntegrationResponse[];
      const success = responses.find((r) => r.SelectionPattern === undefined);
      expect(success?.StatusCode).toBe(String(route.successStatus));
      expect(mockAnswer(route).status).toBe(route.successStatus);

      const body = success?.ResponseTemplates['application/json'] ?? '';
      if (route.successStatus === 204) {
        expect(body).toBe('');
      } else {
        const parsed: unknown = JSON.parse(body);
        const schema =
          { listSpecialEvents: v.array(SpecialEvent), listSpecialEventChanges: ChangeFeedPage }[route.operationId as string] ??
          SpecialEvent;
        expect(v.safeParse(schema, parsed).issues).toBeUndefined();
        expect(parsed).toEqual(mockAnswer(route).body); // the document's success example
        expect(success?.ResponseParameters['method.response.header.Content-Type']).toBe("'application/json'");
      }

      const unauthorized = responses.find((r) => r.SelectionPattern === '401');
      const expected = gatewayResponse('UNAUTHORIZED') as { body: unknown; headers: Record<string, string> };
      expect(JSON.parse(unauthorized?.ResponseTemplates['application/json'] ?? '')).toEqual(expected.body);
      expect(unauthorized?.ResponseParameters['method.response.header.WWW-Authenticate']).toBe(`'${expected.headers['WWW-Authenticate']}'`);
      const requestTemplate = method?.Integration.RequestTemplates['application/json'] as string;
      expect(requestTemplate).toContain("$input.params('Authorization')");
      expect(requestTemplate).toContain(`{"statusCode": ${route.successStatus}}`);
    },
  );

  test('its gateway responses are the same problem+json as the real API, and cdk-nag is satisfied', () => {
    synthesized().mockTemplate.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
      StatusCode: '404',
    });
    expect(synthesized().nagViolations).toEqual([]);
  });
}
