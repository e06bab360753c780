// API Gateway's mapping templates and gateway-response header mappings, executed as API Gateway
// executes them: Velocity (velocityjs) with the small part of `$input`, `$util` and `$context`
// that the stack's templates use (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html),
// and `$context.responseOverride` (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-override-request-response-parameters.html).
// The local gateway answers its MOCK integrations and gateway responses with this, from the same
// definitions the stack deploys (lib/cdk/api-documents.ts, problem-gateway-responses.ts); the
// infrastructure tests run the synthesized templates in Apache Velocity, API Gateway's engine, and
// require the local gateway's answers to equal its (test/infra-engines/mapping-templates.test.ts).
import velocity from 'velocityjs';

/** What a template can see of a request. */
export interface TemplateRequest {
  method: string;
  /** Header lines as sent (names in their own case), in order; a repeated name keeps its last value, as `$input.params()` does. */
  headers: readonly (readonly [string, string])[];
  /** `$context.error.messageString` of a gateway response (already a quoted JSON string). */
  errorMessage?: string;
}

export interface TemplateAnswer {
  body: string;
  status?: number;
  headers: Record<string, string>;
}

const parsed = new Map<string, ReturnType<typeof velocity.parse>>();

// Velocity runs on Java: a template calls Java's String methods, which JavaScript strings lack or
// name differently (`length` is a property, `matches` is `RegExp.test` over the whole string).
// test/infra-engines/mapping-templates.test.ts holds each against Apache Velocity.
const JAVA_STRING_METHODS = Object.entries({
  contains: (text, params) => text.includes(String(params[0])),
  length: (text) => text.length,
  matches: (text, params) => new RegExp(`^(?:${String(params[0])})$`, 'su').test(text),
} satisfies Record<string, (text: string, params: unknown[]) => unknown>).map(([name, method]) => ({
  uid: `java-string-${name}`,
  match: ({ property, context }: { property: string; context: unknown }) => property === name && typeof context === 'string',
  resolve: ({ context, params }: { context: unknown; params: unknown[] }) => method(context as string, params),
}));

/**
 * `$util.escapeJavaScript`: API Gateway names Java's StringEscapeUtils.escapeJavaScript (commons-lang):
 * quotes, backslash and `/` escaped, control characters as `\b \t \n \f \r` or `\u00XX`, and
 * every character above U+007F as `\uXXXX` (upper-case hex, UTF-16 units).
 */
export function escapeJavaScript(text: string): string {
  const named: Record<string, string> = { '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' };
  let escaped = '';
  for (const unit of text.split('')) {
    const code = unit.charCodeAt(0);
    if (unit === "'" || unit === '"' || unit === '\\' || unit === '/') escaped += `\\${unit}`;
    else if (named[unit]) escaped += named[unit];
    else if (code < 0x20 || code > 0x7f) escaped += `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
    else escaped += unit;
  }
  return escaped;
}

/** A template overrode one response parameter twice, which API Gateway answers with a 5XX. */
export class OverriddenTwiceError extends Error {
  override name = 'OverriddenTwiceError';
  constructor(parameter: string) {
    super(`The mapping template overrides ${parameter} twice: API Gateway answers 5XX`);
  }
}

/** Renders `template` for `request`: its output is the body; `$context.responseOverride` sets status and headers. */
export function runMappingTemplate(template: string, request: TemplateRequest): TemplateAnswer {
  let ast = parsed.get(template);
  if (!ast) parsed.set(template, (ast = velocity.parse(template)));
  const header = new Map(request.headers.map(([name, value]) => [name, value]));
  // Overrides are final: a second override of one parameter is a 5XX from API Gateway
  // (https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-override-request-response-parameters.html).
  const once = <T extends object>(target: T, what: string): T =>
    new Proxy(target, {
      set: (object, name, value) => {
        if (Object.hasOwn(object, name)) throw new OverriddenTwiceError(`${what}${String(name)}`);
        return Reflect.set(object, name, value);
      },
    });
  const headerOverrides: Record<string, string> = {};
  const overrides: { status?: number; header: Record<string, string> } = { header: once(headerOverrides, 'header ') };
  const responseOverride = once(overrides, '');
  const context = {
    input: { params: () => ({ header, path: new Map(), querystring: new Map() }) },
    context: { httpMethod: request.method, responseOverride, error: { messageString: request.errorMessage ?? '""' } },
    util: { base64Decode: (text: string) => Buffer.from(text, 'base64').toString('utf8'), escapeJavaScript },
  };
  const compiled = new velocity.Compile(ast, { escape: false, customMethodHandlers: JAVA_STRING_METHODS });
  const body = compiled.render(context);
  return {
    body,
    ...(responseOverride.status === undefined ? {} : { status: responseOverride.status }),
    headers: { ...responseOverride.header },
  };
}

/**
 * The value of a header mapping (`'static'` or `method.request.header.Name`), for `request`;
 * undefined when it maps a header the request does not carry (API Gateway then sends none).
 * Header mappings hold nothing else: https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-swagger-extensions-gateway-responses.gatewayResponse.html
 */
export function mappedHeaderValue(mapping: string, request: TemplateRequest): string | undefined {
  const literal = /^'(.*)'$/s.exec(mapping);
  if (literal) return literal[1];
  const copied = /^method\.request\.header\.(.+)$/.exec(mapping);
  if (!copied) throw new Error(`${mapping} is neither a static value nor a request header`);
  return request.headers.findLast(([name]) => name === copied[1])?.[1];
}
