// The MuseumApi-<stage> stack as synthesized for production and for a preview: functions,
// authorizer, routes, tables, IAM, gateway responses, stage settings, outputs and cdk-nag. The
// constructs the tests look up (a function, its role, the authorizer...) are found in the
// templates by the logical ids the synthesis recorded (test/infra/synthesize-configurations.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import { CONFIGURABLE_TYPES, gatewayResponse, methodNotAllowedResponse, WWW_AUTHENTICATE } from '../../functions/http/gateway-responses.ts';
import { PROBLEM_CONTENT_TYPE, RETRY_AFTER_SECONDS } from '../../functions/events/problems.ts';
import { isAuthenticated, routeMethods, routes } from '../../functions/routes.ts';
import { AUTHORIZER_HANDLER, WEBHOOK_FUNCTIONS } from '../../functions/unrouted-functions.ts';
import { resourceMethods } from '../../functions/route-matching.ts';
import { authorizerEnvironments, FUNCTION_SETTINGS, METHOD_THROTTLING } from '../../functions/deployment.ts';
import { contentTag } from '../../functions/http/read-responses.ts';
import { gatewayCorsHeaders } from '../../lib/cdk/problem-gateway-responses.ts';
import { eventsTable, idempotencyTable } from '../../functions/store/table-definition.ts';
import { ACCESS_LOG_FIELDS } from '../../lib/cdk/access-log-format.ts';
import { apiDocuments, MAPPING_TEMPLATE_LIMIT_BYTES, serviceIndexDocument } from '../../lib/cdk/api-documents.ts';
import { FIREWALL_RULES } from '../../lib/cdk/api-firewall.ts';
import { serviceIndex, serviceIndexHeaders } from '../../lib/openapi/service-index.ts';
import { WAF_CREDENTIAL_RATE_LIMIT_PER_5_MINUTES, WAF_RATE_LIMIT_PER_5_MINUTES } from '../../lib/cdk/stage-config.ts';
import { redocCdnUrl } from '../../lib/openapi/docs-page.ts';
import { buildOpenApiDocument } from '../../lib/openapi/openapi-document.ts';
import { DATA_ACCESS } from '../../lib/cdk/function-permissions.ts';
import { FUNCTIONS_DIRECTORY, LIVE_ALIAS } from '../../lib/cdk/museum-functions.ts';
import { MUSEUM_NAG_RULES } from '../../lib/cdk/museum-nag-rules.ts';
import { PREVIEW_BOUNDARY_NAME } from '../../lib/cdk/preview-containment.ts';
import { mockStackChecks } from './mock-stack-checks.ts';
import { resourcePath, resourcesOfType, synthesize, synthesizeProbe, templateFiles, type Synthesized } from './synthesize.ts';

const FUNCTION_NAMES = [
  ...new Set(routes.map((route) => route.handler)),
  AUTHORIZER_HANDLER,
  ...Object.values(WEBHOOK_FUNCTIONS).map((fn) => fn.handler),
];
/** Helper functions CDK adds for its own custom resources carry these names in their logical ids. */
const CDK_HELPER_FUNCTION = /CustomResource|Provider|LogRetention|AutoDeleteObjects|BucketNotifications/;

let prod: Synthesized;
let preview: Synthesized;
// Configurations several tests read (each synthesized once per run: test/infra/configurations.ts).
const CONFIGURED_PREVIEW = {
  stage: 'pr-2',
  authorizerCacheTtlSeconds: '60',
  corsOrigins: 'https://museum.example',
  waf: 'true',
  monitoring: 'true',
  alarmEmail: 'ops@museum.example',
  domainName: 'api.museum.example',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
};
const PROD_WITHOUT_WAF_BY_EMAIL = { waf: 'false', alarmEmail: 'ops@museum.example' };

beforeAll(() => {
  prod = synthesize();
  preview = synthesize({ stage: 'pr-1' });
});

/** The logical ids of a function (by bundle name), its role and the role's DefaultPolicy. */
function functionIds(app: Synthesized, name: string) {
  const ids = app.ids.functions[name];
  if (!ids) throw new Error(`no function ${name}`);
  return ids;
}

const functionLogicalId = (app: Synthesized, name: string) => functionIds(app, name).function;

describe('Lambda functions', () => {
  test('the template holds exactly the route handlers, the authorizer and the two webhook pipeline functions, besides CDK helpers named as such', () => {
    const functions = resourcesOfType(prod.apiTemplate, 'AWS::Lambda::Function');
    const ours = FUNCTION_NAMES.map((name) => functionLogicalId(prod, name));
    expect(ours).toHaveLength(new Set(routes.map((route) => route.handler)).size + 3);
    for (const id of ours) expect(functions[id]).toBeDefined();
    for (const id of Object.keys(functions).filter((id) => !ours.includes(id))) expect(id).toMatch(CDK_HELPER_FUNCTION);
  });

  test('each function runs its own bundle from dist/functions on nodejs24.x arm64 with the shared memory and timeout', () => {
    const functions = resourcesOfType(prod.apiTemplate, 'AWS::Lambda::Function');
    for (const name of FUNCTION_NAMES) {
      const properties = functions[functionLogicalId(prod, name)]?.Properties as Record<string, any>;
      const settings =
        name === AUTHORIZER_HANDLER
          ? FUNCTION_SETTINGS.authorizer
          : name === WEBHOOK_FUNCTIONS.consumer.handler
            ? FUNCTION_SETTINGS.webhookConsumer
            : name === WEBHOOK_FUNCTIONS.delivery.handler
              ? FUNCTION_SETTINGS.webhookDelivery
              : FUNCTION_SETTINGS.handler;
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
    for (const [app, days] of [
      [prod, 90],
      [preview, 7],
    ] as const) {
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
    expect(Object.keys(env('list-special-events')).sort()).toEqual([
      'CORS_ALLOWED_ORIGINS',
      'IDEMPOTENCY_TABLE_NAME',
      'MUSEUM_TIME_ZONE',
      'NODE_OPTIONS',
      'POWERTOOLS_LOG_LEVEL',
      'POWERTOOLS_METRICS_NAMESPACE',
      'POWERTOOLS_SERVICE_NAME',
      'TABLE_NAME',
    ]);
    expect(env('list-special-events').MUSEUM_TIME_ZONE).toBe('UTC');
    expect(Object.keys(env(AUTHORIZER_HANDLER)).sort()).toEqual([
      'CREDENTIAL_KEYS_SECRET',
      'NODE_OPTIONS',
      'POWERTOOLS_LOG_LEVEL',
      'POWERTOOLS_METRICS_NAMESPACE',
      'POWERTOOLS_SERVICE_NAME',
      'TABLE_NAME',
    ]);
  });

  test('every function of every stack logs JSON and maps stack traces through the shipped source maps', () => {
    for (const app of [prod, preview]) {
      for (const template of [app.apiTemplate, app.mockTemplate]) {
        for (const fn of Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))) {
          expect(fn.Properties).toMatchObject({
            LoggingConfig: { LogFormat: 'JSON' },
            Environment: { Variables: { NODE_OPTIONS: '--enable-source-maps' } },
          });
        }
      }
    }
    expect(Object.keys(resourcesOfType(prod.apiTemplate, 'AWS::Lambda::Function'))).toHaveLength(FUNCTION_NAMES.length);
  });

  test('the authorizer, and only it, has reserved concurrency: the shared cap the local gateway enforces too', () => {
    for (const [app, stage] of [
      [prod, 'production'],
      [preview, 'preview'],
    ] as const) {
      const functions = resourcesOfType(app.apiTemplate, 'AWS::Lambda::Function');
      // Sized to the stage's authenticated method limits (a preview's are lower).
      const authorizerReservation = authorizerEnvironments(METHOD_THROTTLING.api[stage]);
      for (const name of FUNCTION_NAMES) {
        const reserved = functions[functionLogicalId(app, name)]?.Properties?.ReservedConcurrentExecutions;
        expect(reserved).toBe(name === AUTHORIZER_HANDLER ? authorizerReservation : undefined);
      }
    }
    // A flood of new credentials at every authenticated method's production limit (docs/DEPLOY.md, "Logins under a flood of wrong passwords").
    expect(FUNCTION_SETTINGS.authorizer.reservedConcurrency).toBe(authorizerEnvironments(METHOD_THROTTLING.api.production));
  });
});

describe('IAM', () => {
  function statementsOf(app: Synthesized, name: string): { Action: string | string[]; Resource: unknown; Condition?: unknown }[] {
    const policies = resourcesOfType(app.apiTemplate, 'AWS::IAM::Policy');
    return (policies[functionIds(app, name).defaultPolicy]?.Properties?.PolicyDocument as { Statement: never[] }).Statement;
  }
  const actions = (statement: { Action: string | string[] }) => [statement.Action].flat();

  test.each(FUNCTION_NAMES)('%s may call only the DynamoDB actions it uses, on only its table, index and partitions', (name) => {
    const statements = statementsOf(prod, name);
    // The stream's reads are the consumer's event source mapping's (checked below), not data access.
    const streamActions = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
    const dynamodb = statements.filter((s) => actions(s).some((a) => a.startsWith('dynamodb:') && !streamActions.includes(a)));
    const access = DATA_ACCESS[name]!;
    const expected = [
      ...(access.events?.actions ?? []),
      ...(access.dateIndex ?? []),
      ...(access.changes ?? []),
      ...(access.idempotency ?? []),
      ...(access.calendarFeeds ?? []),
    ];
    expect(dynamodb.flatMap(actions).sort()).toEqual(expected.sort());
    for (const statement of dynamodb) {
      expect(JSON.stringify(statement.Resource)).not.toContain('"*"');
      if (JSON.stringify(statement.Resource).includes('TablesEvents') && !JSON.stringify(statement.Resource).includes('/index/')) {
        expect(statement.Condition).toBeDefined(); // dynamodb:LeadingKeys
      }
    }
  });

  test('the list and the calendar feed (its upcoming dates) may Query both month indexes (byMonth, and byMonthEnd for a range starting mid-month), and nothing else may', () => {
    const indexResources = (name: string) =>
      statementsOf(prod, name)
        .filter((s) => JSON.stringify(s.Resource).includes('/index/'))
        .map((s) => ({ actions: actions(s), resource: JSON.stringify(s.Resource) }));
    const readers = ['list-special-events', 'get-calendar-feed'];
    for (const reader of readers) {
      const [list, ...more] = indexResources(reader);
      expect(more).toEqual([]);
      expect(list?.actions).toEqual(['dynamodb:Query']);
      for (const index of eventsTable.globalSecondaryIndexes) expect(list?.resource).toContain(`/index/${index.indexName}"`);
    }
    for (const name of FUNCTION_NAMES.filter((other) => !readers.includes(other))) expect(indexResources(name)).toEqual([]);
  });

  test('the calendar feed functions reach only the CALENDAR# partitions beside what the list and the change feed grant', () => {
    for (const route of routes.filter((candidate) => candidate.grants.calendarFeeds)) {
      const calendar = statementsOf(prod, route.handler).filter((s) => JSON.stringify(s.Condition ?? '').includes('CALENDAR#'));
      expect(calendar.map((s) => s.Condition)).toEqual([{ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CALENDAR#*'] } }]);
      expect(calendar.flatMap(actions).sort()).toEqual([...(route.grants.calendarFeeds ?? [])].sort());
    }
  });

  test("only the authorizer may read users' items (USER#<name>, not the directory), and the event handlers only EVENT# partitions", () => {
    const leadingKeys = (name: string) =>
      JSON.stringify(statementsOf(prod, name).find((s) => JSON.stringify(s.Condition ?? '').includes('LeadingKeys'))?.Condition);
    expect(leadingKeys(AUTHORIZER_HANDLER)).toBe('{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["USER#*"]}}');
    for (const route of routes) {
      if (!route.grants.events) continue; // the change feed reads only its own partitions (below)
      expect(leadingKeys(route.handler)).toBe(
        route.grants.events.partitions === 'webhooks'
          ? '{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["WEBHOOKS","WEBHOOK#*"]}}'
          : '{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["EVENT#*"]}}',
      );
    }
  });

  test('the credential keys are a generated secret, retained in production, that only the authorizer and the calendar token hashers may read (GetSecretValue, that secret only)', () => {
    for (const app of [prod, preview]) {
      const secrets = resourcesOfType(app.apiTemplate, 'AWS::SecretsManager::Secret');
      expect(Object.keys(secrets)).toHaveLength(1);
      const [secretId, secret] = Object.entries(secrets)[0] as [string, { Properties?: any; DeletionPolicy?: string }];
      expect(secret.Properties.GenerateSecretString).toMatchObject({
        SecretStringTemplate: '{"current":"k1"}',
        GenerateStringKey: 'k1',
        PasswordLength: 64,
        ExcludePunctuation: true,
      });
      // Encrypted with Secrets Manager's AWS managed KMS key (no KmsKeyId: aws/secretsmanager).
      expect(secret.Properties.KmsKeyId).toBeUndefined();
      expect(secret.DeletionPolicy).toBe(app === prod ? 'Retain' : 'Delete');
      const readers = FUNCTION_NAMES.filter((name) => JSON.stringify(statementsOf(app, name)).includes('secretsmanager:'));
      // The authorizer, and the two calendar feed functions that hash a feed's token.
      expect(readers.sort()).toEqual([AUTHORIZER_HANDLER, 'create-calendar-feed', 'get-calendar-feed'].sort());
      for (const reader of readers) {
        const grant = statementsOf(app, reader).find((statement) => JSON.stringify(statement.Action).includes('secretsmanager:'));
        expect(grant).toMatchObject({ Action: 'secretsmanager:GetSecretValue', Resource: { Ref: secretId } });
        const env = (resourcesOfType(app.apiTemplate, 'AWS::Lambda::Function')[functionLogicalId(app, reader)]?.Properties as any)
          .Environment.Variables;
        expect(env.CREDENTIAL_KEYS_SECRET).toEqual({ Ref: secretId });
      }
    }
  });

  test('no policy in the stack grants dynamodb:*, Scan or a managed policy to a function', () => {
    const text = JSON.stringify(prod.apiTemplate.toJSON());
    expect(text).not.toContain('dynamodb:*');
    expect(text).not.toContain('dynamodb:Scan');
    const roles = resourcesOfType(prod.apiTemplate, 'AWS::IAM::Role');
    for (const name of FUNCTION_NAMES) {
      expect(roles[functionIds(prod, name).role]?.Properties?.ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('REST API', () => {
  test("every route of the route table is a method under /v1.1 behind the custom authorizer, but the calendar feed's address (NONE)", () => {
    const authorizerId = prod.ids.authorizer;
    const methods = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::Method'))
      .map((m) => ({ ...(m.Properties as any), path: resourcePath(prod.apiTemplate, m.Properties?.ResourceId) }))
      .filter((m) => m.HttpMethod !== 'OPTIONS' && m.HttpMethod !== 'ANY');
    const found = methods.map((m) => `${m.HttpMethod} ${m.path}`);
    // HEAD wherever GET is: the GET route's function, and the documents' MOCKs.
    const documents = [...apiDocuments().map((document) => `/v1.1/${document.path}`), '/v1.1'].flatMap((path) => [
      `GET ${path}`,
      `HEAD ${path}`,
    ]);
    expect(found.sort()).toEqual(
      [...routes.flatMap((route) => routeMethods(route).map((method) => `${method} /v1.1${route.path}`)), ...documents].sort(),
    );
    const withoutCredentials = routes.filter((route) => !isAuthenticated(route)).map((route) => `/v1.1${route.path}`);
    expect(withoutCredentials).toEqual(['/v1.1/calendar.ics']);
    for (const method of methods.filter((m) => !documents.includes(`${m.HttpMethod} ${m.path}`))) {
      if (withoutCredentials.includes(method.path)) {
        expect(method).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'AWS_PROXY' } });
        expect(method.AuthorizerId).toBeUndefined();
        continue;
      }
      expect(method).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
        Integration: { Type: 'AWS_PROXY' },
      });
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
      expect(documentBody(template)).toBe(document.body);
      for (const [name, value] of Object.entries(document.headers)) {
        expect(template).toContain(`#set($context.responseOverride.header.${name} = "${value}")`);
      }
      // A strong ETag of the bytes, 304 for a matching If-None-Match, no content for HEAD.
      expect(template).toContain(`#set($context.responseOverride.header.ETag = '${contentTag(document.body)}')`);
      expect(template).toContain(`$condition.contains('${contentTag(document.body)}')`);
      expect(template).toContain('#set($context.responseOverride.status = 304)');
      expect(
        methods.find((m) => m.HttpMethod === 'HEAD' && m.path === `/v1.1/${document.path}`)?.Integration.IntegrationResponses[0]
          .ResponseTemplates['application/json'],
      ).toBe(template);
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
    const configured = synthesize(CONFIGURED_PREVIEW);
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
    // The 405s, and the 404 of an unknown path ({proxy+}), echo an allowed Origin too, so the browser can read them.
    const notAllowed = Object.values(resourcesOfType(configured.apiTemplate, 'AWS::ApiGateway::Method')).filter(
      (m) => m.Properties?.HttpMethod === 'ANY',
    );
    expect(notAllowed).toHaveLength(resourceMethods().size + apiDocuments().length + 2);
    for (const method of notAllowed) {
      const template = (method.Properties?.Integration as any).IntegrationResponses[0].ResponseTemplates['application/json'] as string;
      expect(template).toContain(`"$!origin" == 'https://museum.example'`);
      expect(template).toContain('#set($context.responseOverride.header.Access-Control-Allow-Origin = $origin)');
    }
    // Gateway responses: the one origin, statically, with the exposed headers.
    for (const response of Object.values(resourcesOfType(configured.apiTemplate, 'AWS::ApiGateway::GatewayResponse'))) {
      expect(response.Properties?.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Access-Control-Allow-Origin': "'https://museum.example'",
        'gatewayresponse.header.Access-Control-Expose-Headers': "'ETag,Location,Retry-After,Link,Allow'",
      });
    }
    // WAF on request in a preview: the same web ACL as production's, associated with the stage.
    configured.apiTemplate.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      Rules: Match.arrayWith([
        Match.objectLike({ Action: { Block: {} }, Statement: { RateBasedStatement: Match.objectLike({ AggregateKeyType: 'IP' }) } }),
      ]),
    });
    configured.apiTemplate.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    // Monitoring on request in a preview, with the e-mail subscription.
    configured.apiTemplate.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@museum.example' });
    configured.apiTemplate.hasResourceProperties('AWS::SNS::TopicPolicy', Match.objectLike({}));
    expect(configured.nagViolations).toEqual([]);
  });

  test('with several allowed origins, gateway responses carry no CORS headers (they cannot check the list); handlers and MOCKs check it', () => {
    expect(gatewayCorsHeaders(['https://a.example', 'https://b.example'])).toEqual({});
    expect(gatewayCorsHeaders([])).toEqual({});
  });

  test('without configured origins, OPTIONS answers 204 with Allow and no CORS headers, without credentials', () => {
    const options = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::Method'))
      .map((m) => ({ ...(m.Properties as any), path: resourcePath(prod.apiTemplate, m.Properties?.ResourceId) }))
      .filter((m) => m.HttpMethod === 'OPTIONS');
    const documentPaths = [...apiDocuments().map((document) => `/${document.path}`), ''];
    expect(options.map((m) => m.path).sort()).toEqual([...resourceMethods().keys(), ...documentPaths].map((path) => `/v1.1${path}`).sort());
    for (const method of options) {
      const allowed = resourceMethods().get(method.path.replace('/v1.1', '')) ?? ['GET'];
      expect(method).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'MOCK' } });
      const [response] = method.Integration.IntegrationResponses;
      expect(response.StatusCode).toBe('204');
      expect(response.ResponseParameters).toEqual({
        'method.response.header.Allow': `'${methodNotAllowedResponse(allowed).headers.Allow}'`,
      });
    }
  });

  test('a method a resource does not have answers 405 problem+json with Allow, from an ANY mock that needs no credentials', () => {
    for (const app of [prod, preview]) {
      const anyMethods = Object.values(resourcesOfType(app.apiTemplate, 'AWS::ApiGateway::Method'))
        .map((m) => ({ ...(m.Properties as any), path: resourcePath(app.apiTemplate, m.Properties?.ResourceId) }))
        .filter((m) => m.HttpMethod === 'ANY');
      const documentPaths = [...apiDocuments().map((document) => `/${document.path}`), ''];
      expect(anyMethods.map((m) => m.path).sort()).toEqual(
        [...resourceMethods().keys(), ...documentPaths].map((path) => `/v1.1${path}`).sort(),
      );
      for (const method of anyMethods) {
        // The public documents have GET (and so HEAD) only.
        const expected = methodNotAllowedResponse(resourceMethods().get(method.path.replace('/v1.1', '')) ?? ['GET']);
        expect(method).toMatchObject({
          AuthorizationType: 'NONE',
          Integration: { Type: 'MOCK', PassthroughBehavior: 'WHEN_NO_TEMPLATES' },
        });
        // No request template: whatever the body's content type, the default integration response answers.
        expect(method.Integration.RequestTemplates).toBeUndefined();
        const [response, ...others] = method.Integration.IntegrationResponses;
        expect(others).toEqual([]);
        expect(response.SelectionPattern).toBeUndefined();
        expect(response.StatusCode).toBe('405');
        // The problem, but for HEAD (no content).
        expect(response.ResponseTemplates['application/json']).toBe(
          `#if($context.httpMethod != 'HEAD')${JSON.stringify(expected.body)}#end`,
        );
        for (const [name, value] of Object.entries(expected.headers)) {
          expect(response.ResponseParameters[`method.response.header.${name}`]).toBe(`'${value}'`);
        }
        expect(expected.headers.Allow).toMatch(/OPTIONS/);
      }
    }
  });

  test('GET /v1.1 answers the service index with its Link headers, without Lambda or credentials', () => {
    const index = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::Method'))
      .map((m) => ({ ...(m.Properties as any), path: resourcePath(prod.apiTemplate, m.Properties?.ResourceId) }))
      .find((m) => m.HttpMethod === 'GET' && m.path === '/v1.1');
    expect(index).toMatchObject({ AuthorizationType: 'NONE', Integration: { Type: 'MOCK' } });
    const template = index.Integration.IntegrationResponses[0].ResponseTemplates['application/json'] as string;
    expect(JSON.parse(documentBody(template))).toEqual(serviceIndex());
    expect(serviceIndexDocument().headers).toEqual(serviceIndexHeaders());
    // The Link header holds double quotes: a single-quoted Velocity literal, never interpreted.
    expect(template).toContain(`#set($context.responseOverride.header.Link = '${serviceIndexHeaders().Link}')`);
    expect(template).toContain('#set($context.responseOverride.header.Content-Type = "application/json")');
  });

  test('every REST API of every stack compresses responses of 1 KiB or more', () => {
    for (const app of [prod, preview]) {
      for (const template of [app.apiTemplate, app.mockTemplate]) {
        const apis = Object.values(resourcesOfType(template, 'AWS::ApiGateway::RestApi'));
        expect(apis).toHaveLength(1);
        for (const api of apis) expect(api.Properties?.MinimumCompressionSize).toBe(1024);
      }
    }
  });

  test('with a custom domain, the execute-api endpoint is disabled; without one it is the API address', () => {
    const custom = synthesize(CONFIGURED_PREVIEW);
    custom.apiTemplate.hasResourceProperties('AWS::ApiGateway::RestApi', { DisableExecuteApiEndpoint: true });
    custom.apiTemplate.resourceCountIs('AWS::ApiGateway::DomainName', 1);
    expect(custom.nagViolations).toEqual([]);
    const api = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::RestApi'))[0];
    expect(api?.Properties?.DisableExecuteApiEndpoint ?? false).toBe(false);
  });

  test('gateway responses answer problem+json, UNAUTHORIZED with the Basic challenge', () => {
    const responses = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::GatewayResponse')).map((r) => r.Properties as any);
    const byType = new Map(responses.map((r) => [r.ResponseType as string, r]));
    for (const type of [
      ...CONFIGURABLE_TYPES,
      'DEFAULT_4XX',
      'DEFAULT_5XX',
      'BAD_REQUEST_PARAMETERS',
      'BAD_REQUEST_BODY',
      'WAF_FILTERED',
    ]) {
      const response = byType.get(type);
      expect(response).toBeDefined();
      expect(response.ResponseParameters['gatewayresponse.header.Content-Type']).toBe(`'${PROBLEM_CONTENT_TYPE}'`);
      expect(response.ResponseParameters['gatewayresponse.header.X-Content-Type-Options']).toBe("'nosniff'");
    }
    for (const type of CONFIGURABLE_TYPES) {
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
    // A throttled, timed-out or failing authorizer is temporary: 503 with Retry-After, never 500.
    for (const type of ['AUTHORIZER_FAILURE', 'AUTHORIZER_CONFIGURATION_ERROR']) {
      const response = byType.get(type);
      expect(response.StatusCode).toBe('503');
      expect(response.ResponseParameters['gatewayresponse.header.Retry-After']).toBe(`'${RETRY_AFTER_SECONDS}'`);
      expect(JSON.parse(response.ResponseTemplates['application/json'])).toMatchObject({ status: 503 });
    }
    // DEFAULT_4XX keeps the status of whatever 4xx it answers; its detail is API Gateway's message.
    expect(byType.get('DEFAULT_4XX').StatusCode).toBeUndefined();
    const default4xx = byType
      .get('DEFAULT_4XX')
      .ResponseTemplates['application/json'].replace('$context.error.messageString', '"Forbidden"');
    expect(JSON.parse(default4xx)).toMatchObject({ title: 'Request rejected', detail: 'Forbidden' });
  });

  test('the stage throttles per context (lower in previews), logs JSON access lines and errors, and traces', () => {
    const { production, preview: previewThrottle } = METHOD_THROTTLING.api;
    for (const [app, rate, burst] of [
      [prod, production.rateLimit, production.burstLimit],
      [preview, previewThrottle.rateLimit, previewThrottle.burstLimit],
    ] as const) {
      app.apiTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: app.config.stage,
        TracingEnabled: true,
        // The stage-wide entry first; the unauthenticated methods' own throttles follow (tested below).
        MethodSettings: Match.arrayWith([
          Match.objectLike({
            HttpMethod: '*',
            ResourcePath: '/*',
            LoggingLevel: 'ERROR',
            DataTraceEnabled: false,
            ThrottlingRateLimit: rate,
            ThrottlingBurstLimit: burst,
          }),
        ]),
      });
    }
    const stage = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::ApiGateway::Stage'))[0]?.Properties as any;
    const format = JSON.parse(stage.AccessLogSetting.Format) as Record<string, string>;
    expect(format).toEqual(ACCESS_LOG_FIELDS);
    expect(JSON.stringify(format).toLowerCase()).not.toContain('authorization');
  });

  test("the account-level CloudWatch role is set once, by the production app's account stack, never by a preview", () => {
    for (const app of [prod, preview]) {
      for (const template of [app.apiTemplate, app.mockTemplate]) {
        template.resourceCountIs('AWS::ApiGateway::Account', 0);
        for (const api of Object.values(resourcesOfType(template, 'AWS::IAM::Role'))) {
          expect(JSON.stringify(api.Properties)).not.toContain('AmazonAPIGatewayPushToCloudWatchLogs');
        }
      }
    }
    expect(preview.account).toBeUndefined();
    const account = prod.account!.template;
    account.resourceCountIs('AWS::ApiGateway::Account', 1);
    account.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'apigateway.amazonaws.com' } })] },
    });
    // Both production stacks are deployed after it: their stages' execution logging needs it.
    expect(prod.api.dependencies).toContain(prod.account!.stackName);
    expect(prod.mock.dependencies).toContain(prod.account!.stackName);
    expect(preview.mock.dependencies).toEqual([]);
  });

  test('outputs: the base URL ends in /v1.1 on the stage, and the table name', () => {
    const outputs = prod.apiTemplate.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual([
      'AlarmTopicArn',
      'ApiBaseUrl',
      'BlockedIpv4SetId',
      'BlockedIpv4SetName',
      'BlockedIpv6SetId',
      'BlockedIpv6SetName',
      'CredentialKeysSecretArn',
      'IdempotencyTableName',
      'ReleaseVersions',
      'TableName',
      'WebhookDeadLetterQueueArn',
    ]);
    const url = JSON.stringify(outputs.ApiBaseUrl?.Value);
    expect(url).toMatch(/"\/v1\.1"\]\]\}$/);
    expect(url).toContain('.execute-api.');
    expect(outputs.TableName?.Value).toEqual({ Ref: prod.ids.tables.events });
  });
});

describe('DynamoDB', () => {
  test('the events table has the key schema and the byMonth and byMonthEnd indexes (dates projected) of the shared definition, on demand', () => {
    prod.apiTemplate.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: eventsTable.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: eventsTable.sortKey.name, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: eventsTable.globalSecondaryIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['dates'] },
      })),
    });
    expect(eventsTable.globalSecondaryIndexes.map((index) => index.indexName)).toEqual(['byMonth', 'byMonthEnd']);
  });

  test('the idempotency table expires its records by TTL', () => {
    prod.apiTemplate.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: idempotencyTable.partitionKey.name, KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: idempotencyTable.timeToLiveAttribute, Enabled: true },
    });
  });

  test('production keeps its data: RETAIN, deletion protection, point-in-time recovery', () => {
    const events = resourcesOfType(prod.apiTemplate, 'AWS::DynamoDB::GlobalTable')[prod.ids.tables.events!];
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
    // Nothing of a preview outlives it: no resource of either stack is retained.
    for (const template of [preview.apiTemplate, preview.mockTemplate]) {
      const resources = Object.entries(
        template.toJSON().Resources as Record<string, { DeletionPolicy?: string; UpdateReplacePolicy?: string }>,
      );
      expect(resources.filter(([, resource]) => resource.DeletionPolicy === 'Retain').map(([id]) => id)).toEqual([]);
    }
  });
});

describe('TableV2 checks (cdk-nag rules Museum-DDBGT1/2)', () => {
  test('in production every global table of every stack has deletion protection, and every one but the idempotency table PITR', () => {
    const idempotencyId = prod.ids.tables.idempotency;
    const stacks = [prod.api, prod.mock, prod.account!].map((stack) => stack.template);
    const tables = stacks.flatMap((template) => Object.entries(resourcesOfType(template, 'AWS::DynamoDB::GlobalTable')));
    expect(tables).toHaveLength(2);
    for (const [id, table] of tables) {
      const replicas = table.Properties?.Replicas as {
        DeletionProtectionEnabled?: boolean;
        PointInTimeRecoverySpecification?: { PointInTimeRecoveryEnabled: boolean };
      }[];
      expect(replicas.length).toBeGreaterThan(0);
      for (const replica of replicas) {
        expect(replica.DeletionProtectionEnabled).toBe(true);
        expect(replica.PointInTimeRecoverySpecification?.PointInTimeRecoveryEnabled ?? false).toBe(id !== idempotencyId);
      }
    }
  });

  test('the app runs the rules: a TableV2 without PITR or deletion protection fails synthesis, unless acknowledged', () => {
    // Production with an unprotected and an acknowledged TableV2 added (test/infra/nag-rule-probes.ts).
    const { error, nagViolations } = synthesizeProbe('unprotected-global-tables');
    expect(error).toBeDefined();
    expect(nagViolations.map((v) => v.ruleName).sort()).toEqual(
      [MUSEUM_NAG_RULES.pointInTimeRecovery, MUSEUM_NAG_RULES.deletionProtection].sort(),
    );
    for (const violation of nagViolations) expect(violation.paths).toEqual(['MuseumApi-prod/Unprotected/Resource']);
  });
});

describe('WAF', () => {
  test('production has a web ACL on its stage: IP reputation, per-IP and per-credential rate limits, AWS common and known-bad-input rules', () => {
    prod.apiTemplate.resourceCountIs('AWS::WAFv2::WebACL', 1);
    const [acl] = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::WAFv2::WebACL')).map((r) => r.Properties as any);
    expect(acl.Scope).toBe('REGIONAL');
    expect(acl.DefaultAction).toEqual({ Allow: {} });
    const rules = new Map<string, any>(acl.Rules.map((rule: any) => [rule.Name, rule]));
    expect([...rules.keys()]).toEqual(Object.values(FIREWALL_RULES));
    expect(rules.get(FIREWALL_RULES.rateLimit)).toMatchObject({
      Action: { Block: {} },
      Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: WAF_RATE_LIMIT_PER_5_MINUTES, EvaluationWindowSec: 300 } },
    });
    expect(rules.get(FIREWALL_RULES.credentialRateLimit)).toMatchObject({
      Action: { Block: {} },
      Statement: {
        RateBasedStatement: {
          AggregateKeyType: 'CUSTOM_KEYS',
          CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
          Limit: WAF_CREDENTIAL_RATE_LIMIT_PER_5_MINUTES,
          EvaluationWindowSec: 300,
        },
      },
    });
    // Per client (address or credential), at most a tenth of one authenticated method's sustained limit.
    for (const name of [FIREWALL_RULES.rateLimit, FIREWALL_RULES.credentialRateLimit]) {
      const statement = rules.get(name).Statement.RateBasedStatement;
      expect(statement.Limit / statement.EvaluationWindowSec).toBeLessThanOrEqual(METHOD_THROTTLING.api.production.rateLimit / 10);
    }
    // The credential is the rate rule's key: replaced in the WAF's log, like the header itself.
    expect(acl.DataProtectionConfig).toEqual({
      DataProtections: [{ Field: { FieldType: 'SINGLE_HEADER', FieldKeys: ['authorization'] }, Action: 'SUBSTITUTION' }],
    });
    const managed = (name: string) => rules.get(name).Statement.ManagedRuleGroupStatement;
    expect(managed(FIREWALL_RULES.ipReputation)).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesAmazonIpReputationList' });
    expect(managed(FIREWALL_RULES.knownBadInputs)).toMatchObject({ VendorName: 'AWS', Name: 'AWSManagedRulesKnownBadInputsRuleSet' });
    // The common rule set blocks bodies over 8 KB; the API takes 64 KB and answers 413 itself.
    expect(managed(FIREWALL_RULES.commonRules)).toEqual({
      VendorName: 'AWS',
      Name: 'AWSManagedRulesCommonRuleSet',
      RuleActionOverrides: [{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }],
    });
    for (const name of [FIREWALL_RULES.ipReputation, FIREWALL_RULES.commonRules, FIREWALL_RULES.knownBadInputs]) {
      expect(rules.get(name).OverrideAction).toEqual({ None: {} });
    }
    // The operator's block list: two IP sets, empty as deployed, checked before anything else.
    const firewall = prod.ids.firewall!;
    expect(rules.get(FIREWALL_RULES.blockedAddresses)).toMatchObject({
      Priority: 0,
      Action: { Block: {} },
      Statement: {
        OrStatement: {
          Statements: [firewall.blockedIpv4, firewall.blockedIpv6].map((set) => ({
            IPSetReferenceStatement: { Arn: { 'Fn::GetAtt': [set, 'Arn'] } },
          })),
        },
      },
    });
    for (const version of ['IPV4', 'IPV6']) {
      prod.apiTemplate.hasResourceProperties('AWS::WAFv2::IPSet', {
        Scope: 'REGIONAL',
        IPAddressVersion: version,
        Addresses: [],
        Name: Match.absent(),
      });
    }
    const outputs = prod.apiTemplate.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining(['BlockedIpv4SetName', 'BlockedIpv4SetId', 'BlockedIpv6SetName', 'BlockedIpv6SetId']),
    );
    const aclId = firewall.webAcl;
    prod.apiTemplate.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [aclId, 'Arn'] },
      ResourceArn: Match.objectLike({ 'Fn::Join': Match.anyValue() }),
    });
  });

  test('WAF logs what it blocked or counted to an aws-waf-logs- group, with the Authorization header redacted', () => {
    // The name ends in the stack id's UUID: retained, it must not collide with the next deployment's.
    prod.apiTemplate.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: {
        'Fn::Join': [
          '',
          ['aws-waf-logs-museum-special-events-prod-', { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] }],
        ],
      },
      RetentionInDays: 90,
    });
    const [logging] = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::WAFv2::LoggingConfiguration')).map((r) => r.Properties as any);
    const logGroupId = prod.ids.firewall!.logGroup;
    // Ref of a log group is its name: the ARN ends in the name, without the `:*` WAF refuses.
    expect(JSON.stringify(logging.LogDestinationConfigs)).toContain(`":log-group:",{"Ref":"${logGroupId}"}]]`);
    expect(JSON.stringify(logging.LogDestinationConfigs)).not.toContain(':*');
    expect(logging.RedactedFields).toEqual([{ SingleHeader: { Name: 'authorization' } }]);
    expect(logging.LoggingFilter.DefaultBehavior).toBe('DROP');
  });

  test('previews have no web ACL unless asked for, and production can opt out', () => {
    preview.apiTemplate.resourceCountIs('AWS::WAFv2::WebACL', 0);
    expect(prod.config.waf).toBe(true);
    const optedOut = synthesize(PROD_WITHOUT_WAF_BY_EMAIL);
    optedOut.apiTemplate.resourceCountIs('AWS::WAFv2::WebACL', 0);
    expect(optedOut.nagViolations).toEqual([]); // APIG3 acknowledged with the opt-out's reason
  });
});

test('Museum-RDP1: a retained resource with a fixed physical name fails synthesis; a generated or per-instance name passes', () => {
  // Production with retained log groups of each kind of name added (test/infra/nag-rule-probes.ts).
  const { error, nagViolations } = synthesizeProbe('retained-fixed-names');
  expect(error).toBeDefined();
  expect(nagViolations.map((v) => v.ruleName)).toEqual([MUSEUM_NAG_RULES.redeployable]);
  expect(nagViolations[0]!.paths.sort()).toEqual(
    ['MuseumApi-prod/FixedRetained/Resource', 'MuseumApi-prod/RegionalRetained/Resource'].sort(),
  );
});

test('no retained resource of production or a preview has a fixed physical name (the rule found nothing to acknowledge)', () => {
  for (const app of [prod, preview]) {
    expect(app.nagViolations).toEqual([]);
    for (const template of [app.apiTemplate, app.mockTemplate]) {
      const retained = Object.values(
        template.toJSON().Resources as Record<string, { DeletionPolicy?: string; Properties?: Record<string, unknown> }>,
      ).filter((resource) => resource.DeletionPolicy === 'Retain');
      for (const resource of retained) {
        for (const [key, value] of Object.entries(resource.Properties ?? {})) {
          if (key.endsWith('Name') && typeof value === 'string') throw new Error(`retained resource with a literal ${key}: ${value}`);
        }
      }
    }
  }
});

describe('operations', () => {
  interface Alarm {
    AlarmName?: string;
    MetricName?: string;
    Metrics?: any[];
    Threshold: number;
    EvaluationPeriods: number;
    DatapointsToAlarm?: number;
    AlarmActions: unknown[];
    AlarmDescription: string;
  }
  // The paging alarms (lib/cdk/api-monitoring.ts); the canary's release alarms are tested with it below.
  const alarmsOf = (app: Synthesized) =>
    Object.entries(resourcesOfType(app.apiTemplate, 'AWS::CloudWatch::Alarm'))
      .filter(([id]) => id.startsWith('Monitoring'))
      .map(([id, a]) => ({ id, ...(a.Properties as unknown as Alarm) }));
  const metricNamesOf = (alarm: Alarm) =>
    [alarm.MetricName, ...(alarm.Metrics ?? []).map((m) => m.MetricStat?.Metric.MetricName)].filter(Boolean);

  test('production alarms cover 5xx rate, p99 latency, authorizer failures, throttles and duration, failed logins, handler errors and throttles, DynamoDB throttling and system errors', () => {
    const alarms = alarmsOf(prod);
    const topicId = prod.ids.monitoringTopic;
    for (const alarm of alarms) expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
    const byId = (fragment: string) => alarms.find((alarm) => alarm.id.includes(fragment))!;
    // Not 5XXError, which counts the 503s of modified gateway responses (authorizer failures) as 4xx.
    expect(metricNamesOf(byId('ServerErrorRate'))).toEqual(['Count', 'ServerErrors-prod']);
    prod.apiTemplate.hasResourceProperties('AWS::Logs::MetricFilter', {
      FilterPattern: '{ $.status = "5*" }',
      LogGroupName: { Ref: prod.ids.accessLogs },
      MetricTransformations: [Match.objectLike({ MetricName: 'ServerErrors-prod', MetricValue: '1' })],
    });
    expect(metricNamesOf(byId('P99Latency'))).toEqual(['Count', 'Latency']);
    expect(metricNamesOf(byId('AuthorizerFailures'))).toEqual(['AuthorizerFailures-prod']);
    expect(metricNamesOf(byId('FailedLogins'))).toEqual(['FailedLogins-prod']);
    expect(metricNamesOf(byId('AuthorizerThrottles'))).toEqual(['Throttles']);
    expect(metricNamesOf(byId('AuthorizerDuration'))).toEqual(['Duration']);
    // Every route handler and webhook pipeline function is in exactly one Errors and one Throttles
    // sum; a metric-math alarm takes at most 10 metrics
    // (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Create_Metric_Math_Alarm.html).
    const nonAuthorizers = FUNCTION_NAMES.filter((name) => name !== AUTHORIZER_HANDLER).map((name) => functionLogicalId(prod, name));
    const sums = (metricName: string) =>
      alarms.filter((alarm) =>
        (alarm.Metrics ?? []).some((m) => m.MetricStat?.Metric.Namespace === 'AWS/Lambda' && m.MetricStat.Metric.MetricName === metricName),
      );
    const summed: Alarm[] = [];
    for (const metricName of ['Errors', 'Throttles']) {
      const groups = sums(metricName);
      summed.push(...groups);
      const watched = groups.flatMap((alarm) => {
        const stats = (alarm.Metrics ?? []).filter((m) => m.MetricStat);
        expect(stats.length).toBeLessThanOrEqual(10);
        expect(metricNamesOf(alarm)).toEqual(Array(stats.length).fill(metricName));
        return stats.map(
          (m) =>
            (m.MetricStat.Metric.Dimensions as { Name: string; Value: { Ref: string } }[]).find((d) => d.Name === 'FunctionName')?.Value
              .Ref,
        );
      });
      expect(watched.sort()).toEqual([...nonAuthorizers].sort());
    }
    for (const table of ['EventsTable', 'IdempotencyTable']) {
      expect(new Set(metricNamesOf(byId(`${table}Throttles`)))).toEqual(new Set(['ThrottledRequests']));
      expect(new Set(metricNamesOf(byId(`${table}SystemErrors`)))).toEqual(new Set(['SystemErrors']));
    }
    // The ten above, and the sums of the functions' errors and throttles.
    expect(alarms).toHaveLength(10 + summed.length);
    prod.apiTemplate.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
  });

  test('the dashboard has what each runbook cites: the latency split, 5xx by source, 401s by address', () => {
    const [dashboard] = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard?.Properties?.DashboardBody);
    for (const text of [
      'integration p99',
      'authorizer p99',
      'Latency',
      'filter status like /^5/',
      'by resourcePath, errorType',
      '401',
      'by ip',
    ]) {
      expect([text, body.includes(text)]).toEqual([text, true]);
    }
  });

  test('no alarm pages on a single error: each needs a minimum request count or several breaching periods', () => {
    for (const alarm of alarmsOf(prod)) {
      const expression = (alarm.Metrics ?? []).find((m) => m.Expression)?.Expression as string | undefined;
      const needsVolume = expression?.includes('requests >= 20') ?? false;
      expect(needsVolume || (alarm.DatapointsToAlarm ?? 1) >= 2).toBe(true);
      if (!expression?.includes('IF(')) expect(alarm.Threshold).toBeGreaterThan(1);
    }
    const rate = alarmsOf(prod).find((alarm) => alarm.id.includes('ServerErrorRate'))!;
    expect(rate.Metrics?.find((m) => m.Expression)?.Expression).toBe('IF(requests >= 20, errors / requests, 0)');
    expect(rate).toMatchObject({ Threshold: 0.05, DatapointsToAlarm: 2, EvaluationPeriods: 3 });
  });

  test('production cannot be deployed without an alarm destination: an e-mail or an existing topic', () => {
    // No destination in context: the template requires the AlarmEmail parameter (CloudFormation refuses without it).
    const parameters = prod.apiTemplate.toJSON().Parameters as Record<string, { Type: string; Default?: unknown; AllowedPattern?: string }>;
    expect(parameters.AlarmEmail).toMatchObject({ Type: 'String', AllowedPattern: expect.stringContaining('@') });
    expect(parameters.AlarmEmail?.Default).toBeUndefined();
    prod.apiTemplate.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: { Ref: 'AlarmEmail' } });

    const byEmail = synthesize(PROD_WITHOUT_WAF_BY_EMAIL);
    const byTopic = synthesize({ alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:museum-ops-chat' });
    expect(byEmail.apiTemplate.toJSON().Parameters?.AlarmEmail).toBeUndefined();
    byEmail.apiTemplate.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@museum.example' });
    byTopic.apiTemplate.resourceCountIs('AWS::SNS::Topic', 0);
    for (const alarm of alarmsOf(byTopic)) expect(alarm.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:123456789012:museum-ops-chat']);
    expect([...byEmail.nagViolations, ...byTopic.nagViolations]).toEqual([]);
  });

  test('previews have no alarms, dashboard or alarm parameter unless asked for', () => {
    preview.apiTemplate.resourceCountIs('AWS::CloudWatch::Alarm', 0);
    preview.apiTemplate.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(preview.apiTemplate.toJSON().Parameters?.AlarmEmail).toBeUndefined();
  });
});

describe('cdk-nag', () => {
  test('the AwsSolutions pack finds nothing unacknowledged in production or in a preview', () => {
    expect(prod.nagViolations).toEqual([]);
    expect(preview.nagViolations).toEqual([]);
  });
});

/** The document a MOCK's response template decodes. */
function documentBody(template: string): string {
  return Buffer.from(/\$util\.base64Decode\("([A-Za-z0-9+/=]+)"\)/.exec(template)?.[1] ?? '', 'base64').toString('utf8');
}

describe('canary releases', () => {
  const aliasIds = (app: Synthesized) => app.ids.live.map(({ alias }) => alias);

  test('every function, the authorizer included, is published as a version behind a `live` alias, in production and previews', () => {
    for (const app of [prod, preview]) {
      const aliases = resourcesOfType(app.apiTemplate, 'AWS::Lambda::Alias');
      expect(Object.keys(aliases).sort()).toEqual(aliasIds(app).sort());
      for (const live of app.ids.live) {
        const properties = aliases[live.alias]?.Properties;
        expect(properties).toMatchObject({
          Name: 'live',
          FunctionName: { Ref: live.function },
          FunctionVersion: { 'Fn::GetAtt': [expect.any(String), 'Version'] },
        });
      }
      // In production old versions stay: a rollback points the alias back at one.
      for (const version of Object.values(resourcesOfType(app.apiTemplate, 'AWS::Lambda::Version'))) {
        expect(version.DeletionPolicy).toBe(app === prod ? 'Retain' : 'Delete');
      }
    }
  });

  test('the integrations and the authorizer call the aliases, never $LATEST', () => {
    for (const app of [prod, preview]) {
      const ids = aliasIds(app);
      const methods = Object.values(resourcesOfType(app.apiTemplate, 'AWS::ApiGateway::Method')).filter(
        (method) => (method.Properties?.Integration as { Type?: string } | undefined)?.Type === 'AWS_PROXY',
      );
      // Every route, and a HEAD beside each GET (the same function).
      expect(methods).toHaveLength(routes.length + routes.filter((route) => route.method === 'GET').length);
      for (const method of methods) {
        const uri = JSON.stringify((method.Properties?.Integration as { Uri: unknown }).Uri);
        expect(ids.some((id) => uri.includes(`{"Ref":"${id}"}`))).toBe(true);
      }
      const [authorizer] = Object.values(resourcesOfType(app.apiTemplate, 'AWS::ApiGateway::Authorizer'));
      expect(JSON.stringify(authorizer?.Properties?.AuthorizerUri)).toContain(`{"Ref":"${app.ids.liveAuthorizer}"}`);
      // API Gateway may invoke the aliases only.
      for (const permission of Object.values(resourcesOfType(app.apiTemplate, 'AWS::Lambda::Permission'))) {
        expect(ids).toContain((permission.Properties?.FunctionName as { Ref: string }).Ref);
      }
    }
  });

  test('production shifts each alias with CodeDeploy, 10% for 5 minutes, watching release alarms, and rolls back by itself', () => {
    const groups = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::CodeDeploy::DeploymentGroup'));
    // One per function behind a `live` alias: every route handler, the authorizer and the webhook
    // pipeline's functions, whose event source mappings invoke the alias.
    const handlerCount = new Set(routes.map((route) => route.handler)).size;
    const webhookCount = Object.keys(WEBHOOK_FUNCTIONS).length;
    expect(groups).toHaveLength(handlerCount + 1 + webhookCount);
    expect(aliasIds(prod)).toHaveLength(handlerCount + 1 + webhookCount);
    const mappingTargets = Object.values(resourcesOfType(prod.apiTemplate, 'AWS::Lambda::EventSourceMapping')).map((mapping) =>
      JSON.stringify(mapping.Properties?.FunctionName),
    );
    expect(mappingTargets).toHaveLength(webhookCount);
    // `<function name>:live`, the name taken from the alias's ARN.
    for (const target of mappingTargets)
      expect([target, aliasIds(prod).some((id) => target.includes(`{"Ref":"${id}"}`)) && target.includes(`:${LIVE_ALIAS}`)]).toEqual([
        target,
        true,
      ]);
    const releaseAlarms = prod.ids.releaseAlarms!;
    for (const group of groups) {
      expect(group.Properties).toMatchObject({
        DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
        AutoRollbackConfiguration: {
          Enabled: true,
          Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM']),
        },
        AlarmConfiguration: { Enabled: true, Alarms: expect.any(Array) },
      });
      const watched = (group.Properties?.AlarmConfiguration as { Alarms: { Name: { Ref: string } }[] }).Alarms.map(
        (alarm) => alarm.Name.Ref,
      );
      expect(watched.length).toBeGreaterThanOrEqual(1);
      for (const id of watched) expect(releaseAlarms).toContain(id);
    }
    // Each alias update waits for its CodeDeploy deployment.
    for (const id of aliasIds(prod)) {
      expect((prod.apiTemplate.toJSON().Resources[id] as { UpdatePolicy?: unknown }).UpdatePolicy).toMatchObject({
        CodeDeployLambdaAliasUpdate: expect.any(Object),
      });
    }
    // Release alarms look at one minute (the canary lasts five): the stage's 5xx from the access
    // log, and each handler's new version's errors.
    const alarms = resourcesOfType(prod.apiTemplate, 'AWS::CloudWatch::Alarm');
    for (const id of releaseAlarms) expect(alarms[id]?.Properties).toMatchObject({ Period: 60, EvaluationPeriods: 1 });
    const versionAlarms = releaseAlarms.filter((id) => JSON.stringify(alarms[id]?.Properties).includes('ExecutedVersion'));
    expect(versionAlarms).toHaveLength(handlerCount + webhookCount);
  });

  test('previews deploy all at once: no CodeDeploy', () => {
    for (const type of ['AWS::CodeDeploy::DeploymentGroup', 'AWS::CodeDeploy::Application']) preview.apiTemplate.resourceCountIs(type, 0);
    for (const alias of Object.values(
      preview.apiTemplate.toJSON().Resources as Record<string, { Type: string; UpdatePolicy?: unknown }>,
    ).filter((r) => r.Type === 'AWS::Lambda::Alias')) {
      expect(alias.UpdatePolicy).toBeUndefined();
    }
  });
});

describe('unauthenticated routes', () => {
  test("every method without credentials takes the stage's limit (METHOD_THROTTLING.api), as the authenticated routes do: no method setting lowers it", () => {
    for (const app of [prod, preview]) {
      const [stage] = Object.values(resourcesOfType(app.apiTemplate, 'AWS::ApiGateway::Stage'));
      const settings = stage?.Properties?.MethodSettings as { ResourcePath: string; HttpMethod: string; ThrottlingRateLimit: number }[];
      const open = Object.values(resourcesOfType(app.apiTemplate, 'AWS::ApiGateway::Method'))
        .filter((method) => (method.Properties?.AuthorizationType ?? 'NONE') === 'NONE')
        .map((method) => `${String(method.Properties?.HttpMethod)} ${resourcePath(app.apiTemplate, method.Properties?.ResourceId)}`)
        .sort();
      // The 405 mocks, OPTIONS, the service index and the documents at least.
      expect(open).toEqual(
        expect.arrayContaining([
          'ANY /v1.1/special-events',
          'ANY /v1.1/special-events/{eventId}',
          'OPTIONS /v1.1/special-events',
          'GET /v1.1',
          'GET /v1.1/openapi.json',
          'GET /v1.1/docs',
        ]),
      );
      expect(settings).toEqual([
        expect.objectContaining({ ResourcePath: '/*', HttpMethod: '*', ThrottlingRateLimit: app.config.throttle.rateLimit }),
      ]);
      expect(app.config.throttle).toEqual(METHOD_THROTTLING.api[app.config.isProduction ? 'production' : 'preview']);
    }
  });
});

test("every role of a preview carries the preview account's permissions boundary; production roles do not", () => {
  for (const template of [preview.apiTemplate, preview.mockTemplate]) {
    for (const role of Object.values(resourcesOfType(template, 'AWS::IAM::Role'))) {
      expect(JSON.stringify(role.Properties?.PermissionsBoundary)).toContain(`:policy/${PREVIEW_BOUNDARY_NAME}`);
    }
  }
  for (const role of Object.values(resourcesOfType(prod.apiTemplate, 'AWS::IAM::Role')))
    expect(role.Properties?.PermissionsBoundary).toBeUndefined();
});

describe('the mock stack, MuseumMockApi-<stage> (of the same preview synthesis)', () => {
  mockStackChecks(() => preview);
});

describe('CloudFormation quotas', () => {
  // https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html: a
  // template passed as an S3 object (cdk deploy uploads every template over 51,200 bytes to the
  // bootstrap bucket) is at most 1 MB, read here as 1,000,000 bytes; at most 500 resources, 200
  // outputs and 200 parameters. CloudFormation refuses a larger template at deploy time, which no
  // local run can show: this is where a growing stack hears of it.
  const QUOTAS = { bytes: 1_000_000, resources: 500, outputs: 200, parameters: 200 };

  test.each([
    ['production', () => prod],
    ['a preview', () => preview],
    ['a preview with WAF, monitoring and a custom domain', () => synthesize(CONFIGURED_PREVIEW)],
  ])('every template of %s is within them', (_name, app) => {
    const { outdir } = app();
    const templates = templateFiles(outdir);
    expect(templates.length).toBeGreaterThanOrEqual(2);
    for (const { file, text } of templates) {
      const template = JSON.parse(text) as Record<string, Record<string, unknown> | undefined>;
      const count = (section: string) => Object.keys(template[section] ?? {}).length;
      const measured = {
        bytes: Buffer.byteLength(text),
        resources: count('Resources'),
        outputs: count('Outputs'),
        parameters: count('Parameters'),
      };
      const over = Object.entries(QUOTAS).filter(([quota, limit]) => measured[quota as keyof typeof QUOTAS] > limit);
      expect({ file, over }).toEqual({ file, over: [] });
    }
  });
});
