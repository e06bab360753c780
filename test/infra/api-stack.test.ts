// The MuseumApi-<stage> stack as synthesized for production and for a preview: functions,
// authorizer, routes, tables, IAM, gateway responses, stage settings, outputs and cdk-nag.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { gatewayResponse, GATEWAY_RESPONSES, WWW_AUTHENTICATE } from '../../functions/shared/gateway-responses.ts';
import { PROBLEM_CONTENT_TYPE } from '../../functions/shared/problems.ts';
import { AUTHORIZER_HANDLER, FUNCTION_SETTINGS, routes } from '../../functions/shared/routes.ts';
import { eventsTable, idempotencyTable } from '../../functions/shared/table-definition.ts';
import { ACCESS_LOG_FIELDS } from '../../lib/access-log-format.ts';
import { apiDocuments, MAPPING_TEMPLATE_LIMIT_BYTES } from '../../lib/api-documents.ts';
import { redocCdnUrl } from '../../lib/openapi/docs-page.ts';
import { buildOpenApiDocument } from '../../lib/openapi/openapi-document.ts';
import { DATA_ACCESS } from '../../lib/function-permissions.ts';
import { FUNCTIONS_DIRECTORY } from '../../lib/museum-functions.ts';
import { resourcePath, resourcesOfType, synthesize, type Synthesized } from './synthesize.ts';

const FUNCTION_NAMES = [...new Set(routes.map((route) => route.handler)), AUTHORIZER_HANDLER];
/** Helper functions CDK adds for its own custom resources carry these names in their logical ids. */
const CDK_HELPER_FUNCTION = /CustomResource|Provider|LogRetention|AutoDeleteObjects|BucketNotifications/;

let prod: Synthesized;
let preview: Synthesized;

beforeAll(() => {
  prod = synthesize();
  preview = synthesize({ stage: 'pr-1' });
});
afterAll(() => {
  prod?.cleanup();
  preview?.cleanup();
});

function logicalId(stack: Synthesized['api'], construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as never);
}

function functionLogicalId(app: Synthesized, name: string): string {
  const fn = name === AUTHORIZER_HANDLER ? app.api.functions.authorizer : app.api.functions.handlers.get(name);
  if (!fn) throw new Error(`no function ${name}`);
  return logicalId(app.api, fn);
}

describe('Lambda functions', () => {
  test('the template holds exactly the five handlers and the authorizer, besides CDK helpers named as such', () => {
    const functions = resourcesOfType(prod.apiTemplate, 'AWS::Lambda::Function');
    const ours = FUNCTION_NAMES.map((name) => functionLogicalId(prod, name));
    expect(ours).toHaveLength(6);
    for (const id of ours) expect(functions[id]).toBeDefined();
    for (const id of Object.keys(functions).filter((id) => !ours.includes(id))) expect(id).toMatch(CDK_HELPER_FUNCTION);
  });

  test('each function runs its own bundle from dist/functions on nodejs24.x arm64 with the shared memory and timeout', () => {
    const functions = resourcesOfType(prod.apiTemplate, 'AWS::Lambda::Function');
    for (const name of FUNCTION_NAMES) {
      const properties = functions[functionLogicalId(prod, name)]?.Properties as Record<string, any>;
      const settings = name === AUTHORIZER_HANDLER ? FUNCTION_SETTINGS.authorizer : FUNCTION_SETTINGS.handler;
      expect(properties).toMatchObject({
        Handler: 'index.handler',
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        MemorySize: settings.memorySize,
        Timeout: settings.timeoutSeconds,
        TracingConfig: { Mode: 'Active' },
      });
      // The deployed asset is the very file the local API runs.
      const assetHash = String(properties.Code.S3Key).replace(/\.zip$/, '');
      const deployed = readFileSync(join(prod.outdir, `asset.${assetHash}`, 'index.mjs'));
      expect(deployed.equals(readFileSync(join(FUNCTIONS_DIRECTORY, name, 'index.mjs')))).toBe(true);
    }
  });

  test('each function logs to its own log group, kept 90 days in production and 7 in previews', () => {
    for (const [app, days] of [[prod, 90], [preview, 7]] as const) {
      const functions = resourcesOfType(app.apiTemplate, 'AWS::Lambda::Function');
      const logGroups = resourcesOfType(app.apiTemplate, 'AWS::Logs::LogGroup');
      const used = FUNCTION_NAMES.map((name) => {
        const config = functions[functionLogicalId(app, name)]?.Properties?.LoggingConfig as { LogGroup: { Ref: string } };
        expect(logGroups[config.LogGroup.Ref]?.Properties?.RetentionInDays).toBe(days);
        return config.LogGroup.Ref;
      });
      expect(new Set(used).size).toBe(FUNCTION_NAMES.length);
    }
  });

  test('handlers get the table names, time zone and Powertools settings; the authorizer only what it reads', () => {
    const functions = resourcesOfType(prod.apiTemplate, 'AWS::Lambda::Function');
    const env = (name: string) => (functions[functionLogicalId(prod, name)]?.Properties as any).Environment.Variables;
    expect(Object.keys(env('list-special-events')).sort()).toEqual(
      ['CORS_ALLOWED_ORIGINS', 'IDEMPOTENCY_TABLE_NAME', 'MUSEUM_TIME_ZONE', 'POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_SERVICE_NAME', 'TABLE_NAME'],
    );
    expect(env('list-special-events').MUSEUM_TIME_ZONE).toBe('UTC');
    expect(Object.keys(env(AUTHORIZER_HANDLER)).sort()).toEqual(
      ['AUTH_CACHE_TTL_SECONDS', 'POWERTOOLS_LOG_LEVEL', 'POWERTOOLS_METRICS_NAMESPACE', 'POWERTOOLS_SERVICE_NAME', 'TABLE_NAME'],
    );
  });
});

describe('IAM', () => {
  function roleOf(app: Synthesized, name: string) {
    const fn = name === AUTHORIZER_HANDLER ? app.api.functions.authorizer : app.api.functions.handlers.get(name);
    return fn!.role!;
  }
  function statementsOf(app: Synthesized, name: string): { Action: string | string[]; Resource: unknown; Condition?: unknown }[] {
    const policy = roleOf(app, name).node.findChild('DefaultPolicy');
    const policies = resourcesOfType(app.apiTemplate, 'AWS::IAM::Policy');
    return (policies[logicalId(app.api, policy)]?.Properties?.PolicyDocument as { Statement: never[] }).Statement;
  }
  const actions = (statement: { Action: string | string[] }) => [statement.Action].flat();

  test.each(FUNCTION_NAMES)('%s may call only the DynamoDB actions it uses, on only its table, index and partitions', (name) => {
    const statements = statementsOf(prod, name);
    const dynamodb = statements.filter((s) => actions(s).some((a) => a.startsWith('dynamodb:')));
    const access = DATA_ACCESS[name]!;
    const expected = [...(access.events?.actions ?? []), ...(access.dateIndex ?? []), ...(access.idempotency ?? [])];
    expect(dynamodb.flatMap(actions).sort()).toEqual(expected.sort());
    for (const statement of dynamodb) {
      expect(JSON.stringify(statement.Resource)).not.toContain('"*"');
      if (JSON.stringify(statement.Resource).includes('TablesEvents') && !JSON.stringify(statement.Resource).includes('/index/')) {
        expect(statement.Condition).toBeDefined(); // dynamodb:LeadingKeys
      }
    }
  });

  test('only the authorizer may read the USERS partition, and the event handlers only EVENT# partitions', () => {
    const leadingKeys = (name: string) =>
      JSON.stringify(statementsOf(prod, name).find((s) => JSON.stringify(s.Condition ?? '').includes('LeadingKeys'))?.Condition);
    expect(leadingKeys(AUTHORIZER_HANDLER)).toBe('{"ForAllValues:StringEquals":{"dynamodb:LeadingKeys":["USERS"]}}');
    for (const route of routes) expect(leadingKeys(route.handler)).toBe('{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["EVENT#*"]}}');
  });

  test('no policy in the stack grants dynamodb:*, Scan or a managed policy to a function', () => {
    const text = JSON.stringify(prod.apiTemplate.toJSON());
    expect(text).not.toContain('dynamodb:*');
    expect(text).not.toContain('dynamodb:Scan');
    const roles = resourcesOfType(prod.apiTemplate, 'AWS::IAM::Role');
    for (const name of FUNCTION_NAMES) {
      expect(roles[logicalId(prod.api, roleOf(prod, name))]?.Properties?.ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('REST API', () => {
  test('every route of the route table is a method under /v1.1 behind the custom authorizer', () => {
    const authorizerId = logicalId(prod.api, prod.api.api.authorizer);
    const methods = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::Method'))
      .map((m) => ({ ...(m.Properties as any), path: resourcePath(prod.apiTemplate, m.Properties?.ResourceId) }))
      .filter((m) => m.HttpMethod !== 'OPTIONS');
    const found = methods.map((m) => `${m.HttpMethod} ${m.path}`);
    const documents = apiDocuments().map((document) => `GET /v1.1/${document.path}`);
    expect(found.sort()).toEqual([...routes.map((route) => `${route.method} /v1.1${route.path}`), ...documents].sort());
    for (const method of methods.filter((m) => !documents.includes(`${m.HttpMethod} ${m.path}`))) {
      expect(method).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId }, Integration: { Type: 'AWS_PROXY' } });
    }
  });

  test('GET /v1.1/openapi.json and /v1.1/docs serve the generated document and page without Lambda or credentials', () => {
    const methods = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::Method')).map((m) => ({
      ...(m.Properties as any),
      path: resourcePath(prod.apiTemplate, m.Properties?.ResourceId),
    }));
    for (const document of apiDocuments()) {
      const method = methods.find((m) => m.HttpMethod === 'GET' && m.path === `/v1.1/${document.path}`);
      expect(method).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'MOCK' } });
      const template = method.Integration.IntegrationResponses[0].ResponseTemplates['application/json'] as string;
      expect(Buffer.byteLength(template)).toBeLessThan(MAPPING_TEMPLATE_LIMIT_BYTES);
      const encoded = /\$util\.base64Decode\("([A-Za-z0-9+/=]+)"\)$/.exec(template)?.[1] ?? '';
      expect(Buffer.from(encoded, 'base64').toString('utf8')).toBe(document.body);
      for (const [name, value] of Object.entries(document.headers)) {
        expect(template).toContain(`#set($context.responseOverride.header.${name} = "${value}")`);
      }
    }
    const [openapi, docs] = apiDocuments();
    expect(JSON.parse(openapi!.body)).toEqual(buildOpenApiDocument());
    expect(docs!.headers['Content-Type']).toBe('text/html; charset=utf-8');
    expect(docs!.body).toContain(redocCdnUrl());
  });

  test('the authorizer caches 300 s unless configured; CORS, WAF and alarm e-mail follow the context', () => {
    prod.apiTemplate.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 300,
    });
    const configured = synthesize({
      stage: 'pr-2',
      authorizerCacheTtlSeconds: '60',
      corsOrigins: 'https://museum.example',
      waf: 'true',
      monitoring: 'true',
      alarmEmail: 'ops@museum.example',
    });
    try {
      configured.apiTemplate.hasResourceProperties('AWS::ApiGateway::Authorizer', { AuthorizerResultTtlInSeconds: 60 });
      // CORS: preflight OPTIONS answer without authentication, only for the configured origin.
      const options = Object.values(resourcesOfType(configured.apiTemplate, 'AWS::ApiGateway::Method')).filter(
        (m) => m.Properties?.HttpMethod === 'OPTIONS',
      );
      expect(options.length).toBeGreaterThanOrEqual(3);
      for (const method of options) {
        expect(method.Properties?.AuthorizationType ?? 'NONE').toBe('NONE');
        expect(JSON.stringify(method.Properties?.Integration)).toContain("'https://museum.example'");
      }
      // The optional WAF: a per-IP rate-based rule, associated with the stage.
      configured.apiTemplate.hasResourceProperties('AWS::WAFv2::WebACL', {
        Scope: 'REGIONAL',
        Rules: [Match.objectLike({ Action: { Block: {} }, Statement: { RateBasedStatement: Match.objectLike({ AggregateKeyType: 'IP' }) } })],
      });
      configured.apiTemplate.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
      // Monitoring on request in a preview, with the e-mail subscription.
      configured.apiTemplate.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@museum.example' });
      configured.apiTemplate.hasResourceProperties('AWS::SNS::TopicPolicy', Match.objectLike({}));
      expect(configured.nagViolations).toEqual([]);
    } finally {
      configured.cleanup();
    }
  });

  test('without configured origins there is no preflight method and no WAF', () => {
    const options = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::Method')).filter(
      (m) => m.Properties?.HttpMethod === 'OPTIONS',
    );
    expect(options).toEqual([]);
    prod.apiTemplate.resourceCountIs('AWS::WAFv2::WebACL', 0);
  });

  test('gateway responses answer problem+json, UNAUTHORIZED with the Basic challenge', () => {
    const responses = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::GatewayResponse')).map((r) => r.Properties as any);
    const byType = new Map(responses.map((r) => [r.ResponseType as string, r]));
    for (const type of [...Object.keys(GATEWAY_RESPONSES), 'DEFAULT_4XX', 'DEFAULT_5XX', 'BAD_REQUEST_PARAMETERS', 'BAD_REQUEST_BODY', 'WAF_FILTERED']) {
      const response = byType.get(type);
      expect(response).toBeDefined();
      expect(response.ResponseParameters['gatewayresponse.header.Content-Type']).toBe(`'${PROBLEM_CONTENT_TYPE}'`);
      expect(response.ResponseParameters['gatewayresponse.header.X-Content-Type-Options']).toBe("'nosniff'");
    }
    for (const type of Object.keys(GATEWAY_RESPONSES) as (keyof typeof GATEWAY_RESPONSES)[]) {
      const expected = gatewayResponse(type);
      const response = byType.get(type);
      expect(response.StatusCode).toBe(String(expected.statusCode));
      expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual(expected.body);
    }
    const unauthorized = byType.get('UNAUTHORIZED');
    expect(unauthorized.StatusCode).toBe('401');
    expect(unauthorized.ResponseParameters['gatewayresponse.header.WWW-Authenticate']).toBe(`'${WWW_AUTHENTICATE}'`);
    expect(WWW_AUTHENTICATE).toBe('Basic realm="museum", charset="UTF-8"');
    expect(byType.get('ACCESS_DENIED').StatusCode).toBe('403');
    expect(byType.get('THROTTLED').StatusCode).toBe('429');
    expect(byType.get('DEFAULT_5XX').StatusCode).toBe('500');
    // DEFAULT_4XX keeps the status of whatever 4xx it answers; its detail is API Gateway's message.
    expect(byType.get('DEFAULT_4XX').StatusCode).toBeUndefined();
    const default4xx = byType.get('DEFAULT_4XX').ResponseTemplates['application/json'].replace('$context.error.messageString', '"Forbidden"');
    expect(JSON.parse(default4xx)).toMatchObject({ title: 'Request rejected', detail: 'Forbidden' });
  });

  test('the stage throttles per context (lower in previews), logs JSON access lines and errors, and traces', () => {
    for (const [app, rate, burst] of [[prod, 100, 200], [preview, 10, 20]] as const) {
      app.apiTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: app.config.stage,
        TracingEnabled: true,
        MethodSettings: [Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false, ThrottlingRateLimit: rate, ThrottlingBurstLimit: burst })],
      });
    }
    const stage = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::Stage'))[0]?.Properties as any;
    const format = JSON.parse(stage.AccessLogSetting.Format) as Record<string, string>;
    expect(format).toEqual(ACCESS_LOG_FIELDS);
    expect(JSON.stringify(format).toLowerCase()).not.toContain('authorization');
    prod.apiTemplate.hasResourceProperties('AWS::ApiGateway::Account', { CloudWatchRoleArn: Match.anyValue() });
  });

  test('outputs: the base URL ends in /v1.1 on the stage, and the table name', () => {
    const outputs = prod.apiTemplate.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual(['AlarmTopicArn', 'ApiBaseUrl', 'TableName']);
    const url = JSON.stringify(outputs.ApiBaseUrl?.Value);
    expect(url).toMatch(/"\/v1\.1"\]\]\}$/);
    expect(url).toContain('.execute-api.');
    expect(outputs.TableName?.Value).toEqual({ Ref: logicalId(prod.api, prod.api.tables.events) });
  });
});

describe('DynamoDB', () => {
  test('the events table has the key schema and byDate index of the shared definition, on demand', () => {
    const index = eventsTable.globalSecondaryIndexes[0];
    prod.apiTemplate.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: eventsTable.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: eventsTable.sortKey.name, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
            { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    });
  });

  test('the idempotency table expires its records by TTL', () => {
    prod.apiTemplate.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: idempotencyTable.partitionKey.name, KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: idempotencyTable.timeToLiveAttribute, Enabled: true },
    });
  });

  test('production keeps its data: RETAIN, deletion protection, point-in-time recovery', () => {
    const events = resourcesOfType(prod.apiTemplate, 'AWS::DynamoDB::GlobalTable')[logicalId(prod.api, prod.api.tables.events)];
    expect(events?.DeletionPolicy).toBe('Retain');
    // TableV2 (AWS::DynamoDB::GlobalTable) sets both per replica; the stack has one, in its region.
    expect(events?.Properties?.Replicas).toEqual([
      expect.objectContaining({ DeletionProtectionEnabled: true, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }),
    ]);
  });

  test('a preview is destroyed with its data: DESTROY, no deletion protection, no point-in-time recovery', () => {
    for (const table of Object.values(resourcesOfType(preview.apiTemplate, 'AWS::DynamoDB::GlobalTable'))) {
      expect(table.DeletionPolicy).toBe('Delete');
      expect(table.Properties?.Replicas).toEqual([expect.objectContaining({ DeletionProtectionEnabled: false })]);
      expect(JSON.stringify(table.Properties)).not.toContain('"PointInTimeRecoveryEnabled":true');
    }
    for (const logGroup of Object.values(resourcesOfType(preview.apiTemplate, 'AWS::Logs::LogGroup'))) {
      expect(logGroup.DeletionPolicy).toBe('Delete');
    }
  });
});

describe('operations', () => {
  test('production alarms cover 5xx rate, p99 latency, authorizer failures, Lambda errors and throttles, DynamoDB throttling', () => {
    const alarms = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::CloudWatch::Alarm')).map((a) => a.Properties as any);
    const topicId = logicalId(prod.api, prod.api.monitoring!.topic);
    for (const alarm of alarms) expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
    const metricNames = alarms.map((a) => a.MetricName ?? a.Metrics?.map((m: any) => m.MetricStat?.Metric.MetricName).filter(Boolean).join(','));
    expect(metricNames).toEqual(
      expect.arrayContaining(['5XXError', 'Latency', 'AuthorizerFailures-prod', 'Errors', 'Throttles', expect.stringContaining('ThrottledRequests')]),
    );
    expect(metricNames.filter((name) => name === 'Errors')).toHaveLength(5);
    expect(metricNames.filter((name) => name === 'Throttles')).toHaveLength(6);
    prod.apiTemplate.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });

  test('previews have no alarms or dashboard unless asked for', () => {
    preview.apiTemplate.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    preview.apiTemplate.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
  });
});

describe('cdk-nag', () => {
  test('the AwsSolutions pack finds nothing unacknowledged in production or in a preview', () => {
    expect(prod.nagViolations).toEqual([]);
    expect(preview.nagViolations).toEqual([]);
  });
});
