// The answers API Gateway makes itself, executed locally from the definitions the stack deploys:
// MOCK integrations (documents, 405, OPTIONS, the unknown-path 404 with CORS on;
// lib/openapi/mock-answers.ts) and gateway responses (functions/http/gateway-responses.ts). Their
// templates run in a Velocity engine and their header mappings are evaluated per request
// (mapping-template.ts), so what a browser or a cache sees of them locally is what the deployed
// configuration sends.
import type { IncomingMessage } from 'node:http';
import { configuredGatewayResponses, type ConfiguredGatewayResponse } from '../../functions/http/gateway-responses.ts';
import type { MockAnswer } from '../openapi/mock-answers.ts';
import { mappedHeaderValue, runMappingTemplate, type TemplateRequest } from './mapping-template.ts';

export interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** What a mapping template sees of `request`, with the method API Gateway routed it as. */
export function templateRequest(request: Pick<IncomingMessage, 'rawHeaders'>, method: string): TemplateRequest {
  const headers: [string, string][] = [];
  for (let i = 0; i < request.rawHeaders.length; i += 2)
    headers.push([request.rawHeaders[i] as string, request.rawHeaders[i + 1] as string]);
  return { method, headers };
}

/**
 * A MOCK integration's answer: the integration response's status and static headers, then the
 * template's body and `$context.responseOverride`. API Gateway adds `Content-Type` to every
 * integration response, `application/json` by default (the template's media type)
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-known-issues.html).
 */
export function mockAnswer(answer: MockAnswer, request: TemplateRequest): Answer {
  const rendered = answer.template === undefined ? { body: '', headers: {} } : runMappingTemplate(answer.template, request);
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  for (const [name, mapping] of Object.entries(answer.headers)) {
    const value = mappedHeaderValue(mapping, request);
    if (value !== undefined) headers[name] = value;
  }
  Object.assign(headers, rendered.headers);
  const statusCode = 'status' in rendered && rendered.status !== undefined ? rendered.status : answer.statusCode;
  const noContent = statusCode === 204 || statusCode === 304 || request.method === 'HEAD';
  return { statusCode, headers, ...(noContent || rendered.body === '' ? {} : { body: rendered.body }) };
}

/** The gateway responses as the stack configures them for `corsOrigins`, answered per request. */
export function gatewayResponses(corsOrigins: readonly string[]) {
  const configured = configuredGatewayResponses(corsOrigins);
  return (type: string, request: TemplateRequest, status: number, message: string): Answer => {
    const response: ConfiguredGatewayResponse | undefined = configured[type] ?? configured[status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX'];
    if (!response) throw new Error(`No gateway response for ${type}`);
    const headers: Record<string, string> = {};
    for (const [name, mapping] of Object.entries(response.headers)) {
      const value = mappedHeaderValue(mapping, request);
      if (value !== undefined) headers[name] = value;
    }
    const { body } = runMappingTemplate(response.template, { ...request, errorMessage: JSON.stringify(message) });
    return { statusCode: response.statusCode ?? status, headers, body };
  };
}
