// The MuseumMockApi-<stage> stack: every route of the route table as API Gateway MOCK integrations with example
// bodies and real status codes, at a base path without /v1.1, with no Lambda and no table.
// Run by api-stack.test.ts on the preview it reads anyway: each configuration of the app is
// synthesized once per run (test/infra/configurations.ts), and a configuration fewer to synthesize
// is time saved (synthesis is the slow part of the infrastructure tests).
import * as v from 'valibot';
import { ChangeFeedPage } from '../../lib/openapi/document-schemas.ts';
import { SpecialEvent } from '../../functions/events/event-schema.ts';
import { gatewayResponse } from '../../functions/http/gateway-responses.ts';
import { isAuthenticated, routeMethods, routes, type OperationId } from '../../functions/routes.ts';
import {
  SubscriptionId,
  type CreatedSubscription,
  type DeliveryAttempt,
  type SubscriptionView,
} from '../../functions/webhooks/webhook-schema.ts';
import { ChangeTypes } from '../../functions/webhooks/webhook-schema.ts';
import { mockAnswer, MOCK_STAGE_NAME } from '../../lib/cdk/museum-mock-api-stack.ts';
import ICAL from 'ical.js';
import { FEED_ID_PATTERN } from '../../functions/calendar/feed-rules.ts';
import type { CreatedFeed, FeedView } from '../../functions/calendar/feed-schema.ts';
import { resourcePath, resourcesOfType, type Synthesized } from './synthesize.ts';

// The webhook handlers answer TypeScript types (functions/webhooks/webhook-schema.ts), not valibot
// schemas: these restate them, and their output types must be those types.
const isoTime = v.pipe(v.string(), v.isoTimestamp());
const WebhookSubscription: v.GenericSchema<unknown, SubscriptionView> = v.strictObject({
  id: SubscriptionId,
  url: v.string(),
  types: ChangeTypes,
  owner: v.string(),
  enabled: v.boolean(),
  createdAt: isoTime,
  disabledReason: v.optional(v.string()),
});
const CreatedWebhookSubscription: v.GenericSchema<unknown, CreatedSubscription> = v.strictObject({
  id: SubscriptionId,
  url: v.string(),
  types: ChangeTypes,
  secret: v.pipe(v.string(), v.regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)),
  createdAt: isoTime,
});
const WebhookDelivery: v.GenericSchema<unknown, DeliveryAttempt> = v.strictObject({
  time: isoTime,
  changeId: v.string(),
  status: v.optional(v.pipe(v.number(), v.integer())),
  error: v.optional(v.string()),
  durationMs: v.pipe(v.number(), v.integer(), v.minValue(0)),
  outcome: v.picklist(['delivered', 'retrying', 'failed', 'disabled', 'skipped']),
});

// The calendar feed handlers answer TypeScript types (functions/calendar/feed-schema.ts), restated here.
const CalendarFeed: v.GenericSchema<unknown, FeedView> = v.strictObject({
  id: v.pipe(v.string(), v.regex(FEED_ID_PATTERN)),
  label: v.optional(v.string()),
  createdAt: isoTime,
});
const CreatedCalendarFeed: v.GenericSchema<unknown, CreatedFeed> = v.strictObject({
  id: v.pipe(v.string(), v.regex(FEED_ID_PATTERN)),
  label: v.optional(v.string()),
  createdAt: isoTime,
  url: v.pipe(v.string(), v.url()),
});

/** What each operation's success answer is (operations without content: undefined). */
const SUCCESS_BODIES: Record<OperationId, v.GenericSchema | undefined> = {
  createSpecialEvent: SpecialEvent,
  listSpecialEvents: v.array(SpecialEvent),
  getSpecialEvent: SpecialEvent,
  updateSpecialEvent: SpecialEvent,
  deleteSpecialEvent: undefined,
  listSpecialEventChanges: ChangeFeedPage,
  createWebhookSubscription: CreatedWebhookSubscription,
  listWebhookSubscriptions: v.strictObject({ subscriptions: v.array(WebhookSubscription) }),
  getWebhookSubscription: WebhookSubscription,
  deleteWebhookSubscription: undefined,
  rotateWebhookSecret: v.strictObject({
    id: SubscriptionId,
    secret: v.pipe(v.string(), v.startsWith('whsec_')),
    previousSecretExpiresAt: isoTime,
  }),
  replayWebhookChanges: v.strictObject({ queued: v.pipe(v.number(), v.integer(), v.minValue(0)), next: v.string(), complete: v.boolean() }),
  listWebhookDeliveries: v.strictObject({ deliveries: v.array(WebhookDelivery) }),
  enableWebhookSubscription: WebhookSubscription,
  createCalendarFeed: CreatedCalendarFeed,
  listCalendarFeeds: v.strictObject({ feeds: v.array(CalendarFeed) }),
  deleteCalendarFeed: undefined,
  // text/calendar, checked below with the iCalendar parser.
  getCalendarFeed: undefined,
};

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

  test('it serves every route of the route table (and HEAD wherever GET is) at the root of its stage, without /v1.1', () => {
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
      const schema = SUCCESS_BODIES[operationId];
      const text = mockAnswer(route).text;
      if (text) {
        // The example calendar, base64 in the template so that no character of it is template syntax.
        const encoded = /^\$util\.base64Decode\("([A-Za-z0-9+/=]+)"\)$/.exec(body)?.[1] ?? '';
        const calendar = new ICAL.Component(ICAL.parse(Buffer.from(encoded, 'base64').toString('utf8')) as unknown[]);
        expect(calendar.getAllSubcomponents('vevent').length).toBeGreaterThan(0);
        expect(success?.ResponseParameters['method.response.header.Content-Type']).toBe(`'${text.contentType}'`);
      } else if (!schema) {
        expect(body).toBe('');
      } else {
        const parsed: unknown = JSON.parse(body);
        expect(v.safeParse(schema, parsed).issues).toBeUndefined();
        expect(parsed).toEqual(mockAnswer(route).body); // the document's success example
        expect(success?.ResponseParameters['method.response.header.Content-Type']).toBe("'application/json'");
      }

      const unauthorized = responses.find((r) => r.SelectionPattern === '401');
      const expected = gatewayResponse('UNAUTHORIZED') as { body: unknown; headers: Record<string, string> };
      expect(JSON.parse(unauthorized?.ResponseTemplates['application/json'] ?? '')).toEqual(expected.body);
      expect(unauthorized?.ResponseParameters['method.response.header.WWW-Authenticate']).toBe(`'${expected.headers['WWW-Authenticate']}'`);
      const requestTemplate = method?.Integration.RequestTemplates['application/json'] as string;
      // A route without credentials (the calendar feed) answers anyone.
      if (isAuthenticated(route)) expect(requestTemplate).toContain("$input.params('Authorization')");
      else expect(requestTemplate).toBe(`{"statusCode": ${route.successStatus}}`);
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
