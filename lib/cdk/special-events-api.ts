// The REST API, built from the route table: one method per route, each behind the Basic-auth
// REQUEST authorizer (but a route marked `authorization: 'none'`) and proxied to its handler; besides them only unauthenticated MOCKs that
// run no code (lib/cdk/api-documents.ts): the service index and documents, 405 and OPTIONS answers.
// HEAD is routed wherever GET is, to the same function.
//
// Base path: API Gateway stage names cannot contain dots, so the version is a resource instead:
// every route lives under a `v1.1` resource of the stage, and the base URL is
// https://<api-id>.execute-api.<region>.amazonaws.com/<stage>/v1.1 (or https://<domain>/v1.1
// with the optional custom domain mapped at its root). The authorizer derives that `/v1.1`
// prefix from event.resource, and the handlers build Location from requestContext.path, which
// includes the stage and the prefix, so both work unchanged under either address.
import { Duration, RemovalPolicy, Size, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_VERSION, BASE_PATH, isAuthenticated, routeMethods, routes } from '../../functions/routes.ts';
import { AUTHORIZER_IDENTITY } from '../../functions/unrouted-functions.ts';
import { resourceMethods } from '../../functions/route-matching.ts';
import { STAGE_TRACING_ENABLED } from '../../functions/deployment.ts';
import { MINIMUM_COMPRESSION_BYTES } from '../../functions/events/limits.ts';
import { jsonAccessLogFormat } from './access-log-format.ts';
import {
  addMethodNotAllowed,
  addOptionsAllow,
  addServiceIndex,
  addStaticDocuments,
  addUnknownPathAnswers,
  type StaticDocument,
} from './api-documents.ts';
import type { MuseumFunctions } from './museum-functions.ts';
import { addProblemGatewayResponses } from './problem-gateway-responses.ts';
import type { StageConfig } from './stage-config.ts';

/** The resource every route hangs under: BASE_PATH without its leading slash. */
export const VERSION_RESOURCE = BASE_PATH.slice(1);

/** The security scheme's name in the specification, used as the authorizer's name. */
export const AUTHORIZER_NAME = 'MuseumPlaceholderAuth';

/** Responses at least this large are gzip-compressed for clients that accept it (the local gateway reads the same bound). */
export const MINIMUM_COMPRESSION_SIZE = Size.bytes(MINIMUM_COMPRESSION_BYTES);

export interface SpecialEventsApiProps {
  config: StageConfig;
  functions: MuseumFunctions;
  /** Served under /v1.1 without authentication (the OpenAPI document and its docs page). */
  documents?: readonly StaticDocument[];
}

export class SpecialEventsApi extends Construct {
  readonly api: apigw.RestApi;
  /** `/v1.1`: the routes, and the place for anything else the versioned API serves. */
  readonly versionRoot: apigw.Resource;
  readonly authorizer: apigw.RequestAuthorizer;
  readonly accessLogs: logs.LogGroup;
  /** The base URL clients use, ending in `/v1.1`. */
  readonly baseUrl: string;
  readonly domainName: apigw.DomainName | undefined;

  constructor(scope: Construct, id: string, props: SpecialEventsApiProps) {
    super(scope, id);
    const { config, functions } = props;
    const removalPolicy = config.isProduction ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- RetentionDays values are the numbers of days; the stage config checks it is one
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: config.logRetentionDays as logs.RetentionDays, removalPolicy });
    this.api = this.createRestApi(config);
    // API Gateway would create the execution log group itself, with no retention and outside the stack.
    new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${config.stage}`,
      // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- RetentionDays values are the numbers of days; the stage config checks it is one
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy,
    });
    this.authorizer = new apigw.RequestAuthorizer(this, 'BasicAuthorizer', {
      authorizerName: AUTHORIZER_NAME,
      handler: functions.liveAuthorizer,
      identitySources: [apigw.IdentitySource.header(AUTHORIZER_IDENTITY.header)],
      // The cached policy covers every route the user's role allows (functions/authorizer.ts).
      resultsCacheTtl: Duration.seconds(config.authorizerCacheTtlSeconds),
    });
    const validator = this.createRequestValidator();
    // CORS preflights are the OPTIONS methods below (with Allow), not CDK's preflight options.
    this.versionRoot = this.api.root.addResource(VERSION_RESOURCE);
    this.addRouteMethods(functions, validator);
    this.addAnswersWithoutCode(config, props.documents ?? []);
    this.domainName = config.customDomain ? this.mapCustomDomain(config.customDomain) : undefined;
    this.baseUrl = config.customDomain
      ? `https://${config.customDomain.domainName}${BASE_PATH}`
      : this.api.deploymentStage.urlForPath(BASE_PATH);
  }

  private createRestApi(config: StageConfig): apigw.RestApi {
    const api = new apigw.RestApi(this, 'Api', {
      restApiName: `museum-special-events-${config.stage}`,
      description: `Museum Special Events API ${API_VERSION} (${config.stage})`,
      endpointConfiguration: { types: [apigw.EndpointType.REGIONAL] },
      // Execution logging uses the account-level CloudWatch role, which the once-per-account
      // MuseumApiGatewayAccount stack owns (lib/cdk/api-gateway-account-stack.ts): a stage never sets it.
      cloudWatchRole: false,
      minCompressionSize: MINIMUM_COMPRESSION_SIZE,
      // With a custom domain, that is the only address: the execute-api URL would bypass its TLS policy and mapping.
      disableExecuteApiEndpoint: Boolean(config.customDomain),
      deployOptions: {
        stageName: config.stage,
        throttlingRateLimit: config.throttle.rateLimit,
        throttlingBurstLimit: config.throttle.burstLimit,
        accessLogDestination: new apigw.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: jsonAccessLogFormat(),
        // ERROR, not INFO: INFO writes several lines for every request, repeating the access log.
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false, // would log request and response bodies and headers (Authorization)
        tracingEnabled: STAGE_TRACING_ENABLED,
        metricsEnabled: false, // per-method metrics are billed as custom metrics; stage metrics are free
      },
    });
    // Outputs are the stack's to choose: ApiBaseUrl, ending in /v1.1, replaces the stage URL.
    api.node.tryRemoveChild('Endpoint');
    Validations.of(api).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'The specification defines HTTP Basic credentials (MuseumPlaceholderAuth), checked by a Lambda REQUEST authorizer against the users table.',
    });
    return api;
  }

  private createRequestValidator(): apigw.RequestValidator {
    return new apigw.RequestValidator(this, 'RequestValidator', {
      restApi: this.api,
      requestValidatorName: 'parameters-and-body',
      validateRequestParameters: true,
      // No request models: the handlers validate bodies with the schemas that generate the
      // contract, and answer with field-level problems the gateway's validator cannot produce.
      validateRequestBody: true,
    });
  }

  /** One method per route (and HEAD beside GET), proxied to the route's handler. */
  private addRouteMethods(functions: MuseumFunctions, validator: apigw.RequestValidator): void {
    for (const route of routes) {
      const handler = functions.liveHandlers.get(route.handler);
      if (!handler) throw new Error(`No function was built for the route handler ${route.handler}`);
      const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string);
      // HEAD is its own method in API Gateway: routed to the GET route's function, which answers without content.
      for (const httpMethod of routeMethods(route)) {
        const method = this.versionRoot.resourceForPath(route.path.slice(1)).addMethod(
          httpMethod,
          // No test-invoke permission: the console's "Test" button is not worth a second grant per method.
          new apigw.LambdaIntegration(handler, { proxy: true, allowTestInvoke: false }),
          {
            operationName: httpMethod === route.method ? route.operationId : `${route.operationId}Head`,
            // A route without credentials (a calendar feed's secret address) checks its request itself.
            ...(isAuthenticated(route)
              ? { authorizationType: apigw.AuthorizationType.CUSTOM, authorizer: this.authorizer }
              : { authorizationType: apigw.AuthorizationType.NONE }),
            requestValidator: validator,
            requestParameters: Object.fromEntries(pathParameters.map((name) => [`method.request.path.${name}`, true])),
          },
        );
        if (!isAuthenticated(route)) {
          Validations.of(method).acknowledge({
            id: 'AwsSolutions-APIG4',
            reason:
              'A calendar feed\'s address: calendar apps send no credentials, the request\'s secret token is checked by the handler (a keyed hash lookup), and each feed is counted (docs/API.md, "Calendar feeds").',
          });
        }
      }
    }
  }

  /** The MOCK answers (lib/cdk/api-documents.ts) and the gateway's own responses as problems. */
  private addAnswersWithoutCode(config: StageConfig, documents: readonly StaticDocument[]): void {
    // A method a resource does not have: 405 with Allow (RFC 9110), not API Gateway's 404.
    for (const [path, methods] of resourceMethods()) {
      const resource = this.versionRoot.resourceForPath(path.slice(1));
      addMethodNotAllowed(resource, methods, config.corsOrigins);
      addOptionsAllow(resource, methods, config.corsOrigins);
    }
    addServiceIndex(this.versionRoot, config.corsOrigins);
    addStaticDocuments(this.versionRoot, documents, config.corsOrigins);
    addUnknownPathAnswers(this.versionRoot, config.corsOrigins);
    addProblemGatewayResponses(this.api, config.corsOrigins);
  }

  // Mapped at the domain's root: the `v1.1` resource is already the first path segment.
  private mapCustomDomain(customDomain: NonNullable<StageConfig['customDomain']>): apigw.DomainName {
    return this.api.addDomainName('CustomDomain', {
      domainName: customDomain.domainName,
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', customDomain.certificateArn),
      endpointType: apigw.EndpointType.REGIONAL,
      securityPolicy: apigw.SecurityPolicy.TLS_1_2,
    });
  }
}
