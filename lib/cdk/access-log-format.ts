// One JSON line per request in the access log: who (source IP, authenticated user), what (method,
// resource, status), how long (total, authorizer, integration) and why it failed (the gateway's
// response type). Never headers or bodies: the Authorization header must not reach a log.
import { AccessLogField as F, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';

export const ACCESS_LOG_FIELDS = {
  requestId: F.contextRequestId(),
  requestTime: F.contextRequestTime(),
  ip: F.contextIdentitySourceIp(),
  userAgent: F.contextIdentityUserAgent(),
  httpMethod: F.contextHttpMethod(),
  resourcePath: F.contextResourcePath(),
  path: F.contextPath(),
  status: F.contextStatus(),
  responseLength: F.contextResponseLength(),
  responseLatency: F.contextResponseLatency(),
  integrationLatency: F.contextIntegrationLatency(),
  integrationStatus: F.contextIntegrationStatus(),
  principal: F.contextAuthorizerPrincipalId(),
  authorizerStatus: F.contextAuthorizerStatus(),
  authorizerLatency: F.contextAuthorizerLatency(),
  authorizerError: F.contextAuthorizerError(),
  /** API Gateway's gateway response type when it answered itself, e.g. UNAUTHORIZED or THROTTLED. */
  errorType: F.contextErrorResponseType(),
  wafStatus: F.contextWafResponseCode(),
  xrayTraceId: F.contextXrayTraceId(),
};

export function jsonAccessLogFormat(): AccessLogFormat {
  return AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS));
}
