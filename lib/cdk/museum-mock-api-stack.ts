// `MuseumMockApi-<stage>`: the same routes at a separate base address without `/v1.1`
// (https://<api-id>.execute-api.<region>.amazonaws.com/mock), answered by API Gateway MOCK
// integrations with the document's success examples (lib/openapi/operations.ts) and real status
// codes. No Lambda, no table: it costs nothing at rest, and client developers can integrate before
// they have credentials.
// A request without Basic credentials gets the real 401 problem; any Basic credentials pass.
import { CfnOutput, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { gatewayResponse } from '../../functions/http/gateway-responses.ts';
import { API_VERSION, isAuthenticated, routeMethods, routes, type OperationId, type Route } from '../../functions/routes.ts';
import { METHOD_THROTTLING } from '../../functions/deployment.ts';
import { operationDetails } from '../openapi/operations.ts';
import { jsonAccessLogFormat } from './access-log-format.ts';
import { addProblemGatewayResponses } from './problem-gateway-responses.ts';
import { MINIMUM_COMPRESSION_SIZE } from './special-events-api.ts';
import type { StageConfig } from './stage-config.ts';

export const MOCK_STAGE_NAME = 'mock';

/** Request media types the mock accepts, as the real API does; others get 415 from the gateway. */
const JSON_MEDIA_TYPES = ['application/json', 'application/merge-patch+json'];

export interface MuseumMockApiStackProps extends StackProps {
  config: StageConfig;
}

export class MuseumMockApiStack extends Stack {
  readonly api: apigw.RestApi;
  readonly baseUrl: string;

  constructor(scope: Construct, id: string, props: MuseumMockApiStackProps) {
    super(scope, id, {
      description: `Museum Special Events API ${API_VERSION}: mock deployment, example responses only (${props.config.stage})`,
      ...props,
    });
    const { config } = props;
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- RetentionDays values are the numbers of days; the stage config checks it is one
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.api = new apigw.RestApi(this, 'MockApi', {
      restApiName: `museum-special-events-mock-${config.stage}`,
      description: `Museum Special Events API ${API_VERSION}, mock responses (${config.stage})`,
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      // Execution logging uses the account-level role of the MuseumApiGatewayAccount stack.
      cloudWatchRole: false,
      minCompressionSize: MINIMUM_COMPRESSION_SIZE,
      deployOptions: {
        stageName: MOCK_STAGE_NAME,
        // Examples only, no credentials checked: per method, sized to a monthly budget (functions/routes.ts).
        throttlingRateLimit: METHOD_THROTTLING.mock.rateLimit,
        throttlingBurstLimit: METHOD_THROTTLING.mock.burstLimit,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: jsonAccessLogFormat(),
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        metricsEnabled: false,
      },
    });
    this.api.node.tryRemoveChild('Endpoint'); // MockApiBaseUrl, without the trailing slash, replaces it
    new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${MOCK_STAGE_NAME}`,
      // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- RetentionDays values are the numbers of days; the stage config checks it is one
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: config.isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    const validator = new apigw.RequestValidator(this, 'RequestValidator', {
      restApi: this.api,
      validateRequestParameters: true,
      validateRequestBody: true,
    });
    for (const route of routes) {
      const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
      const { integration, methodResponses } = mockIntegration(mockAnswer(route));
      // HEAD wherever GET is, as on the real API (API Gateway sends no content for HEAD).
      for (const httpMethod of routeMethods(route)) {
        this.api.root.resourceForPath(route.path.slice(1)).addMethod(httpMethod, integration, {
          operationName: httpMethod === route.method ? route.operationId : `${route.operationId}Head`,
          methodResponses,
          requestValidator: validator,
          requestParameters: Object.fromEntries(pathParameters.map((name) => [`method.request.path.${name}`, true])),
        });
      }
    }
    addProblemGatewayResponses(this.api);

    Validations.of(this.api).acknowledge(
      {
        id: 'AwsSolutions-APIG4',
        reason: 'The mock deployment serves fixed examples and no data; it checks only that Basic credentials are present (401 otherwise).',
      },
      { id: 'AwsSolutions-COG4', reason: 'The mock deployment has no users: it imitates the HTTP Basic scheme of the real API.' },
    );
    Validations.of(this.api.deploymentStage).acknowledge({
      id: 'AwsSolutions-APIG3',
      reason:
        'The mock deployment returns fixed examples; stage throttling (METHOD_THROTTLING.mock, per method) bounds its use, a web ACL would cost more than the mock.',
    });

    this.baseUrl = `https://${this.api.restApiId}.execute-api.${this.region}.${this.urlSuffix}/${MOCK_STAGE_NAME}`;
    new CfnOutput(this, 'MockApiBaseUrl', { description: 'Base URL of the mock deployment (no /v1.1 segment)', value: this.baseUrl });
  }
}

/**
 * What the mock answers a route with credentials (or, for a route without, to anyone): its real
 * success status and the document's success example.
 */
interface MockAnswer {
  status: 200 | 201 | 202 | 204;
  /** Undefined for 204: no body at all. */
  body: unknown;
  headers: Record<string, string>;
  /** A body that is not JSON (the calendar feed's iCalendar text): its media type and text. */
  text?: { contentType: string; body: string };
  authenticated: boolean;
}

export function mockAnswer(route: Route<OperationId>): MockAnswer {
  const details = operationDetails(route);
  const [contentType, media] = Object.entries(details.success.content ?? {})[0] ?? [];
  const example = Object.values((media as { examples?: Record<string, { value: string }> } | undefined)?.examples ?? {})[0];
  return {
    status: route.successStatus,
    body: details.success.body?.example.value,
    headers: details.mockHeaders,
    ...(contentType && example ? { text: { contentType, body: example.value } } : {}),
    authenticated: isAuthenticated(route),
  };
}

function mockIntegration(operation: MockAnswer): { integration: apigw.MockIntegration; methodResponses: apigw.MethodResponse[] } {
  const unauthorized = gatewayResponse('UNAUTHORIZED');
  const success = {
    status: String(operation.status),
    headers: {
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      ...(operation.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(operation.text ? { 'Content-Type': operation.text.contentType } : {}),
      ...operation.headers,
    },
  };
  // A MOCK integration answers with the status code its request template returns.
  const requestTemplate = operation.authenticated
    ? [
        "#if($input.params('Authorization').toLowerCase().startsWith('basic '))",
        `{"statusCode": ${operation.status}}`,
        '#else',
        `{"statusCode": ${unauthorized.statusCode}}`,
        '#end',
      ].join('\n')
    : `{"statusCode": ${operation.status}}`;
  // Text travels base64-encoded, so no character of it is read as template syntax (as the documents' bodies: api-documents.ts).
  const successTemplate = operation.text
    ? `$util.base64Decode("${Buffer.from(operation.text.body, 'utf8').toString('base64')}")`
    : operation.body === undefined
      ? ''
      : JSON.stringify(operation.body);
  const integration = new apigw.MockIntegration({
    passthroughBehavior: apigw.PassthroughBehavior.NEVER,
    requestTemplates: Object.fromEntries(JSON_MEDIA_TYPES.map((type) => [type, requestTemplate])),
    integrationResponses: [
      {
        selectionPattern: String(unauthorized.statusCode),
        statusCode: String(unauthorized.statusCode),
        responseParameters: headerMappings(unauthorized.headers),
        responseTemplates: { 'application/json': JSON.stringify(unauthorized.body) },
      },
      {
        statusCode: success.status,
        responseParameters: headerMappings(success.headers),
        responseTemplates: { 'application/json': successTemplate },
      },
    ],
  });
  return {
    integration,
    methodResponses: [
      { statusCode: success.status, responseParameters: declaredHeaders(success.headers) },
      { statusCode: String(unauthorized.statusCode), responseParameters: declaredHeaders(unauthorized.headers) },
    ],
  };
}

function headerMappings(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, `'${value}'`]));
}

function declaredHeaders(headers: Record<string, string>): Record<string, boolean> {
  return Object.fromEntries(Object.keys(headers).map((name) => [`method.response.header.${name}`, true]));
}
