// How a step of the local gateway's request handling (gateway-request-pipeline.ts) ends a request
// early: with one of the gateway responses the stack configures (GatewayError: its type, status
// and API Gateway's message), or with an answer already made (GatewayAnswer: the payload limit's
// 413, a 400 for a target or body that cannot be used). failureAnswer turns either into the answer.
import type { IncomingMessage } from 'node:http';
import { PAYLOAD_LIMIT_ANSWER, type GatewayResponseType } from '../../functions/http/gateway-responses.ts';
import { templateRequest, type Answer, type gatewayResponses } from './gateway-http-semantics.ts';

/** A gateway response of `type`; types the stack does not configure fall to DEFAULT_4XX/5XX with `status` and API Gateway's `message`. */
export class GatewayError extends Error {
  readonly type: string;
  readonly status: number;
  constructor(type: GatewayResponseType | 'DEFAULT_5XX', status?: number, message?: string) {
    super(message ?? type);
    this.type = type;
    this.status = status ?? 500;
  }
}

/** A finished answer thrown from deep in the request handling (a MOCK's answer, 400 for an unusable target). */
export class GatewayAnswer extends Error {
  readonly answer: Answer;
  constructor(answer: Answer) {
    super(String(answer.statusCode));
    this.answer = answer;
  }
}

/** The 413 of a body over API Gateway's payload limit. */
export function payloadLimitAnswer(): Answer {
  return { statusCode: PAYLOAD_LIMIT_ANSWER.statusCode, headers: { ...PAYLOAD_LIMIT_ANSWER.headers }, body: PAYLOAD_LIMIT_ANSWER.body };
}

export function jsonAnswer(answer: { statusCode: number; headers: Readonly<Record<string, string>>; body: unknown }): Answer {
  return { statusCode: answer.statusCode, headers: { ...answer.headers }, body: JSON.stringify(answer.body) };
}

/**
 * The answer to a request whose handling threw `error`: a GatewayAnswer's own, a GatewayError's
 * gateway response, and for anything else (logged) INTEGRATION_FAILURE's.
 */
export function failureAnswer(error: unknown, request: IncomingMessage, gatewayResponse: ReturnType<typeof gatewayResponses>): Answer {
  if (error instanceof GatewayAnswer) return error.answer;
  if (!(error instanceof GatewayError)) console.error('Local gateway error:', error);
  const failure = error instanceof GatewayError ? error : new GatewayError('INTEGRATION_FAILURE');
  return gatewayResponse(failure.type, templateRequest(request, request.method ?? 'GET'), failure.status, failure.message);
}
