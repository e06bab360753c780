// A local stand-in for API Gateway (REST API, Lambda proxy integration, REQUEST authorizer).
// It turns each HTTP request into the same event API Gateway would send, runs the authorizer
// bundle with API Gateway's caching and policy evaluation, then runs the handler bundle: the very
// files that are deployed, each function in Lambda execution environments of its own
// (lambda-runtime.ts). Only the gateway and Lambda are emulated; no handler code differs.
// A request's steps: gateway-request-pipeline.ts; this module starts the gateway, answers what
// the steps throw and writes the access log.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { BASE_PATH } from '../../functions/routes.ts';
import { AuthorizerStandIn } from './authorizer-stand-in.ts';
import { deployedFunctions } from './deployed-functions.ts';
import { failureAnswer } from './gateway-failures.ts';
import { gatewayResponses } from './gateway-http-semantics.ts';
import { MockIntegrations } from './gateway-mock-integrations.ts';
import { handleRequest, sendAnswer, type GatewayParts } from './gateway-request-pipeline.ts';
import { localThrottleLimits, MethodThrottling, type Throttle } from './gateway-throttling.ts';
import { listenOnLoopback, logPath, serve, type AccessLogEntry } from './http-server.ts';
import { LocalLambda } from './lambda-runtime.ts';
import { PUBLIC_DOCUMENT_PATHS } from '../openapi/public-documents.ts';

export { listenOnLoopback, type AccessLogEntry };

export interface LocalApiGatewayOptions {
  /** Port on 127.0.0.1 (0: any free one); ignored when `server` is given. */
  port?: number;
  /** A server already listening (listenOnLoopback()), so that the port is taken before anything else starts. */
  server?: Server;
  /** Where `npm run build` put the bundles (for the default `lambda`). */
  functionsDirectory?: string;
  /**
   * The Lambda functions the gateway invokes; by default the stack's (deployedFunctions) from
   * `functionsDirectory`. Fault tests give one of their own (test handlers, other settings).
   */
  lambda?: LocalLambda;
  /** API Gateway's authorizer result cache TTL; by default the deployed one (AUTHORIZER_IDENTITY), 0 disables it. */
  authorizerCacheTtlSeconds?: number;
  /** Browser origins allowed by CORS (the deployed stack takes them from context). */
  corsAllowedOrigins?: string[];
  /** Called once per request; defaults to a JSON line on stdout. */
  accessLog?: (entry: AccessLogEntry) => void;
  /** Each method's throttle (default: the deployed production limits, or MUSEUM_THROTTLE_RATE_LIMIT/BURST_LIMIT). */
  throttleLimits?: Throttle;
}

export interface LocalApiGateway {
  url: string;
  /** Retires the function's environments: its next invocation loads its bundle afresh (after a rebuild). */
  retireEnvironments(functionName: string): void;
  close(): Promise<void>;
}

export async function startLocalApiGateway(options: LocalApiGatewayOptions): Promise<LocalApiGateway> {
  // Each function in execution environments of its own, started on demand as Lambda does (no
  // pre-warming: on-demand functions start cold), with its deployed settings (lambda-runtime.ts).
  const lambda = options.lambda ?? new LocalLambda({ functions: deployedFunctions(options.functionsDirectory ?? 'dist/functions') });
  const accessLog = options.accessLog ?? ((entry: AccessLogEntry) => console.log(JSON.stringify(entry)));
  const corsOrigins = options.corsAllowedOrigins ?? [];
  const mocks = new MockIntegrations(corsOrigins);
  const gateway: GatewayParts = {
    lambda,
    authorizerCache: new AuthorizerStandIn(options.authorizerCacheTtlSeconds),
    throttling: new MethodThrottling(options.throttleLimits ?? localThrottleLimits(), {
      documentPaths: PUBLIC_DOCUMENT_PATHS,
      unknownPaths: mocks.answersUnknownPaths,
    }),
    mocks,
  };
  const gatewayResponse = gatewayResponses(corsOrigins);

  const server = options.server ?? (await listenOnLoopback(options.port ?? 0));
  serve(server, (request, response) => answer(gateway, gatewayResponse, accessLog, request, response), accessLog);

  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://127.0.0.1:${port}${BASE_PATH}`,
    retireEnvironments: (functionName) => lambda.retireEnvironments(functionName),
    close: () =>
      new Promise<void>((resolvePromise) => {
        lambda.close();
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}

/** Answers one request (what a step throws as its gateway response or answer), then writes its access log line. */
function answer(
  gateway: GatewayParts,
  gatewayResponse: ReturnType<typeof gatewayResponses>,
  accessLog: (entry: AccessLogEntry) => void,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const started = performance.now();
  const log: { user?: string } = {};
  handleRequest(gateway, request, response, log)
    .catch((error: unknown) => {
      const failure = failureAnswer(error, request, gatewayResponse);
      if (!response.headersSent) return sendAnswer(response, failure);
      return failure.statusCode;
    })
    .then((status) => {
      accessLog({
        method: request.method ?? '',
        path: logPath(request.url),
        status,
        durationMs: Math.round(performance.now() - started),
        ...log,
      });
    })
    .catch((error: unknown) => {
      // Sending the error answer or writing the access log failed: log it and end the exchange.
      console.error('Local gateway error while answering:', error);
      if (!response.writableEnded) response.destroy();
    });
}
