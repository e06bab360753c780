// Checks every end-to-end response against the committed OpenAPI document: the status must be
// documented for the operation, the documented headers present and well-formed, the content type
// one the operation declares and the body valid against its schema (ajv, JSON Schema 2020-12).
// Requests for paths or methods outside the contract must get one of API Gateway's own answers.
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { GATEWAY_RESPONSES, gatewayResponse, type GatewayResponseType } from '../../functions/http/gateway-responses.ts';
import { PROBLEM_CONTENT_TYPE } from '../../functions/events/problems.ts';
import { createValidator } from './json-schema-validator.ts';

export const COMMITTED_OPENAPI_FILE = new URL('../../openapi/openapi.json', import.meta.url);

/** What the checker needs of a response (ApiResponse from api-client.ts has it). */
export interface ObservedResponse {
  status: number;
  headers: Headers;
  text: string;
}

type Json = Record<string, unknown>;

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

const SCHEMAS_ID = 'https://museum.example/openapi/schemas';

export class ContractChecker {
  private readonly document: Json;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly operations: { pattern: RegExp; template: string; item: Json }[];

  constructor(document: Json) {
    this.document = document;
    this.ajv = createValidator();
    // OpenAPI refers to `#/components/schemas/X`; ajv gets those schemas as one resource of $defs.
    const components = (document.components ?? {}) as Json;
    this.ajv.addSchema({ $id: SCHEMAS_ID, $defs: rewriteRefs(components.schemas ?? {}, '#/$defs/') });
    // OpenAPI 3.1, Paths Object ("Path Templating Matching"): a concrete path is matched before a templated one, so
    // `/special-events/changes` is its own operation, not `/special-events/{eventId}`.
    const templatedSegments = (template: string) => template.match(/\{[^}]+\}/g)?.length ?? 0;
    this.operations = Object.entries(document.paths as Record<string, Json>)
      .map(([template, item]) => ({
        template,
        item,
        // `/` is the base URL itself (`/v1.1`, no trailing slash: the service index's links are relative to it).
        pattern: template === '/' ? /^$/ : new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
      }))
      .sort((a, b) => templatedSegments(a.template) - templatedSegments(b.template));
  }

  /** Throws a ContractViolation when `response` is not what the contract promises for `method path`. */
  check(method: string, path: string, response: ObservedResponse): void {
    // API Gateway matches one trailing slash to the resource without it (docs/FIDELITY.md).
    const pathname = (path.split('?')[0] ?? '').replace(/\/$/, '');
    const where = `${method} ${path} -> ${response.status}`;
    const match = this.operations.find((candidate) => candidate.pattern.test(pathname));
    // RFC 9110 §9.3.2: HEAD is the GET without content, wherever the document has no HEAD of its own.
    const headAsGet = method === 'HEAD' && match?.item.head === undefined && match?.item.get !== undefined;
    const operation = match?.item[headAsGet ? 'get' : method.toLowerCase()] as Json | undefined;
    if (!operation) {
      const methodNotAllowed = match?.item['x-method-not-allowed'] as Json | undefined;
      if (methodNotAllowed && response.status === 405) {
        this.checkHeaders(where, methodNotAllowed, response);
        this.checkBody(where, methodNotAllowed, response);
        return;
      }
      this.checkOutsideContract(method, where, response);
      return;
    }
    const responses = operation.responses as Record<string, Json>;
    const documented = responses[String(response.status)];
    if (!documented) {
      throw new ContractViolation(
        `${where}: status ${response.status} is not documented for ${String(operation.operationId)} (documented: ${Object.keys(responses).join(', ')})\n${response.text}`,
      );
    }
    const declared = this.resolve(documented);
    this.checkHeaders(where, declared, response);
    if (headAsGet) {
      if (response.text !== '') throw new ContractViolation(`${where}: a HEAD answer has no content, got: ${response.text}`);
      return;
    }
    this.checkBody(where, declared, response);
  }

  private checkOutsideContract(method: string, where: string, response: ObservedResponse): void {
    // CORS preflights are answered by API Gateway without a body.
    if (method === 'OPTIONS' && response.status === 204 && response.text === '') return;
    const answers = (Object.keys(GATEWAY_RESPONSES) as GatewayResponseType[]).map(gatewayResponse);
    const contentType = response.headers.get('content-type') ?? '';
    if (!mediaType(contentType).startsWith(PROBLEM_CONTENT_TYPE)) {
      throw new ContractViolation(
        `${where}: outside the contract, expected a gateway ${PROBLEM_CONTENT_TYPE} response, got "${contentType}"`,
      );
    }
    const body = parseJson(where, response.text);
    if (!answers.some((answer) => answer.statusCode === response.status && isDeepStrictEqual(answer.body, body))) {
      throw new ContractViolation(
        `${where}: outside the contract, the response is none of API Gateway's gateway responses:\n${response.text}`,
      );
    }
  }

  private checkHeaders(where: string, declared: Json, response: ObservedResponse): void {
    for (const [name, header] of Object.entries((declared.headers ?? {}) as Record<string, Json>)) {
      const definition = this.resolve(header);
      const value = response.headers.get(name);
      if (value === null) {
        if (definition.required) throw new ContractViolation(`${where}: the documented header ${name} is missing`);
        continue;
      }
      const schema = definition.schema as Json;
      const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) : value;
      const validator = this.validator(schema);
      if (!validator(typed))
        throw new ContractViolation(`${where}: header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(validator.errors)}`);
    }
  }

  private checkBody(where: string, declared: Json, response: ObservedResponse): void {
    const content = declared.content as Record<string, Json> | undefined;
    if (!content) {
      if (response.text !== '') throw new ContractViolation(`${where}: the contract declares no body, got: ${response.text}`);
      return;
    }
    const contentType = mediaType(response.headers.get('content-type') ?? '');
    const media = content[contentType];
    if (!media) {
      throw new ContractViolation(
        `${where}: content type "${contentType}" is not documented (documented: ${Object.keys(content).join(', ')})`,
      );
    }
    // A body that is not JSON (the calendar feed's text/calendar) is checked as the text it is.
    const body = /[/+]json$/.test(contentType) ? parseJson(where, response.text) : response.text;
    const validator = this.validator(media.schema as Json);
    if (!validator(body)) {
      throw new ContractViolation(
        `${where}: the body does not match the documented schema: ${this.ajv.errorsText(validator.errors, { separator: '; ' })}\n${response.text}`,
      );
    }
  }

  private validator(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let validator = this.validators.get(key);
    if (!validator) {
      validator = this.ajv.compile(rewriteRefs(schema, `${SCHEMAS_ID}#/$defs/`) as Json);
      this.validators.set(key, validator);
    }
    return validator;
  }

  /** Follows a `$ref` to a component (responses, headers), once. */
  private resolve(object: Json): Json {
    const ref = object.$ref;
    if (typeof ref !== 'string') return object;
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], this.document);
    if (!target) throw new ContractViolation(`The document has no ${ref}`);
    return target as Json;
  }
}

function rewriteRefs(value: unknown, prefix: string): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${prefix}`));
}

function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

function parseJson(where: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ContractViolation(`${where}: the body is not JSON: ${text.slice(0, 200)}`);
  }
}

let committed: ContractChecker | undefined;

/** Called by api() on every response of the end-to-end tests. */
export function assertMatchesContract(method: string, path: string, response: ObservedResponse): void {
  committed ??= new ContractChecker(JSON.parse(readFileSync(COMMITTED_OPENAPI_FILE, 'utf8')) as Json);
  committed.check(method, path, response);
}

/** fetch() against any local API (not only the shared one), the answer checked against the contract. */
export async function fetchChecked(
  baseUrl: string,
  path: string,
  init: RequestInit = {},
): Promise<ObservedResponse & { json: () => unknown }> {
  const response = await fetch(`${baseUrl}${path}`, init);
  const observed = { status: response.status, headers: response.headers, text: await response.text() };
  assertMatchesContract(init.method ?? 'GET', path, observed);
  return { ...observed, json: () => JSON.parse(observed.text) as unknown };
}
