// The deployed definition itself, executed: the synthesized MOCK integrations (their integration
// responses' header mappings and Velocity templates) and gateway responses are run with Apache
// Velocity, the engine API Gateway runs, and API Gateway's `$input`/`$context`/`$util`
// (test/infra-engines/apache-velocity.ts, https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-mapping-template-reference.html)
// against the same requests the local gateway (whose engine is velocityjs, lib/local/mapping-template.ts)
// answers over HTTP, and the answers must be equal: status, body and every header a client or
// cache reads. Two allowed origins, the case where a gateway response cannot choose per request.
import { randomUUID } from 'node:crypto';
import type { Template } from 'aws-cdk-lib/assertions';
import { BASE_PATH } from '../../functions/routes.ts';
import { templateRequest } from '../../lib/local/gateway-http-semantics.ts';
import { startLocalApiGateway, type LocalApiGateway } from '../../lib/local/local-api-gateway.ts';
import { OverriddenTwiceError, runMappingTemplate, type TemplateRequest } from '../../lib/local/mapping-template.ts';
import type { MockAnswer } from '../../lib/openapi/mock-answers.ts';
import { ApacheVelocity, headerMapping, mockAnswerByApacheVelocity } from './apache-velocity.ts';
import { resourcePath, resourcesOfType, synthesize } from '../infra/synthesize.ts';

const ORIGINS = ['https://museum.example', 'https://shop.museum.example'];
const FOREIGN = 'https://evil.example';
const COMPARED_HEADERS = [
  'content-type',
  'etag',
  'allow',
  'link',
  'vary',
  'cache-control',
  'www-authenticate',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'access-control-allow-methods',
  'access-control-allow-headers',
  'access-control-max-age',
];

let template: Template;
let gateway: LocalApiGateway;
let velocity: ApacheVelocity;

beforeAll(async () => {
  velocity = ApacheVelocity.start();
  template = synthesize({ corsOrigins: ORIGINS.join(',') }).apiTemplate;
  // The JVM starts and compiles its runner once, here (slow on a busy machine), not in a test.
  await velocity.render('', { method: 'GET', headers: [] });
  // Throttling is not what this compares: lifted, so that the many requests to one document pass.
  const unlimited = { rateLimit: 1_000_000, burstLimit: 1_000_000 };
  gateway = await startLocalApiGateway({
    corsAllowedOrigins: ORIGINS,
    accessLog: () => undefined,
    throttleLimits: unlimited,
  });
}, 180_000);

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await gateway?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined when the beforeAll that sets it failed
  await velocity?.close();
});

/** A MOCK integration's answer to `request`, as API Gateway composes it, with Apache Velocity running the template. */
const deployedAnswer = (answer: MockAnswer, vtl: TemplateRequest) => mockAnswerByApacheVelocity(velocity, answer, vtl);

/** The synthesized MOCK method API Gateway would pick for `method` on `path` (an explicit method wins over ANY). */
function deployedMock(path: string, method: string): MockAnswer {
  const methods = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'))
    .map(
      (resource) =>
        resource.Properties as {
          HttpMethod: string;
          ResourceId: unknown;
          Integration: {
            Type: string;
            IntegrationResponses: {
              StatusCode: string;
              ResponseParameters?: Record<string, string>;
              ResponseTemplates?: Record<string, string>;
            }[];
          };
        },
    )
    .filter((properties) => resourcePath(template, properties.ResourceId) === path);
  const chosen = methods.find((m) => m.HttpMethod === method) ?? methods.find((m) => m.HttpMethod === 'ANY');
  if (chosen?.Integration.Type !== 'MOCK') throw new Error(`No MOCK for ${method} ${path}`);
  const [response] = chosen.Integration.IntegrationResponses;
  if (!response) throw new Error(`No integration response for ${method} ${path}`);
  return {
    statusCode: Number(response.StatusCode),
    headers: Object.fromEntries(
      Object.entries(response.ResponseParameters ?? {}).map(([name, value]) => [name.replace('method.response.header.', ''), value]),
    ),
    ...(response.ResponseTemplates?.['application/json'] === undefined ? {} : { template: response.ResponseTemplates['application/json'] }),
  };
}

interface Observed {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function pick(headers: Record<string, string>): Record<string, string> {
  const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return Object.fromEntries(COMPARED_HEADERS.filter((name) => lower[name] !== undefined).map((name) => [name, lower[name] as string]));
}

async function local(method: string, path: string, headers: Record<string, string>): Promise<Observed> {
  const response = await fetch(`${gateway.url}${path.slice(BASE_PATH.length)}`, { method, headers });
  const observed = pick(Object.fromEntries(response.headers));
  // The stage's response compression is a layer after the integration (response-compression.ts): its Vary token is not the template's.
  if (observed.vary) observed.vary = observed.vary.replace(/,\s*Accept-Encoding$/, '');
  return { status: response.status, headers: observed, body: await response.text() };
}

function request(method: string, headers: Record<string, string>): TemplateRequest {
  return templateRequest({ rawHeaders: Object.entries(headers).flat() }, method);
}

const eventId = randomUUID();
/** Requests to the MOCK answers: [method, path, resource path in the template]. */
const MOCK_CASES: [string, string, string][] = [
  ['GET', '/v1.1', '/v1.1'],
  ['HEAD', '/v1.1', '/v1.1'],
  ['POST', '/v1.1', '/v1.1'],
  ['OPTIONS', '/v1.1', '/v1.1'],
  ['GET', '/v1.1/openapi.json', '/v1.1/openapi.json'],
  ['DELETE', '/v1.1/openapi.json', '/v1.1/openapi.json'],
  ['PUT', '/v1.1/special-events', '/v1.1/special-events'],
  ['OPTIONS', '/v1.1/special-events', '/v1.1/special-events'],
  ['POST', `/v1.1/special-events/${eventId}`, '/v1.1/special-events/{eventId}'],
  ['OPTIONS', `/v1.1/special-events/${eventId}`, '/v1.1/special-events/{eventId}'],
  ['GET', '/v1.1/tickets', '/v1.1/{proxy+}'],
  ['OPTIONS', '/v1.1/tickets', '/v1.1/{proxy+}'],
];
const ORIGIN_CASES: [string, Record<string, string>][] = [
  ['an allowed origin', { Origin: ORIGINS[1] as string }],
  ['a foreign origin', { Origin: FOREIGN }],
  ['no origin', {}],
];

describe.each(ORIGIN_CASES)(
  'the synthesized MOCK integrations, run by Apache Velocity, answer %s as the local gateway does',
  (_, originHeaders) => {
    test.each(MOCK_CASES)('%s %s', async (method, path, resource) => {
      const headers = { ...originHeaders, ...(method === 'OPTIONS' ? { 'Access-Control-Request-Method': 'GET' } : {}) };
      const deployed = await deployedAnswer(deployedMock(resource, method), request(method, headers));
      const expected: Observed = {
        status: deployed.statusCode,
        headers: pick(deployed.headers),
        body: method === 'HEAD' ? '' : (deployed.body ?? ''),
      };
      expect(await local(method, path, headers)).toEqual(expected);
      // The allowed origin only, never a foreign one, and Vary wherever the answer depends on it.
      expect(expected.headers['access-control-allow-origin']).toBe(originHeaders.Origin === ORIGINS[1] ? ORIGINS[1] : undefined);
      expect(expected.headers.vary).toBe('Origin');
    });
  },
);

describe('conditional GET of a public document, by the synthesized template and by the local gateway alike', () => {
  test.each([
    ['its own ETag', (etag: string) => etag],
    ['its weak ETag', (etag: string) => `W/${etag}`],
    ['a list holding it', (etag: string) => `"other", ${etag}`],
    ['*', () => '*'],
    ['another tag', () => '"other"'],
  ])('If-None-Match: %s', async (_, condition) => {
    const first = await local('GET', '/v1.1/openapi.json', {});
    const headers = { 'If-None-Match': condition(first.headers.etag ?? '') };
    const deployed = await deployedAnswer(deployedMock('/v1.1/openapi.json', 'GET'), request('GET', headers));
    const observed = await local('GET', '/v1.1/openapi.json', headers);
    expect(observed).toEqual({ status: deployed.statusCode, headers: pick(deployed.headers), body: deployed.body ?? '' });
    expect(observed.status).toBe(condition('') === '"other"' ? 200 : 304);
  });
});

test('a template that overrides one header or the status twice is refused by both engines, as API Gateway answers it with a 5XX', async () => {
  for (const line of [
    "#set($context.responseOverride.header.Content-Type = 'text/plain')",
    '#set($context.responseOverride.status = 412)',
  ]) {
    expect(() => runMappingTemplate(`${line}\n${line}`, request('GET', {}))).toThrow(OverriddenTwiceError);
    await expect(velocity.render(`${line}\n${line}`, request('GET', {}))).rejects.toThrow(/overridden twice/);
  }
});

/** Preconditions of RFC 9110 §13.1.1 and §13.2.2: [case, If-Match, If-None-Match, expected status]; If-Match compares strongly. */
const IF_MATCH_CASES: [string, (etag: string) => string, ((etag: string) => string) | undefined, number][] = [
  ['its own ETag holds', (etag) => etag, undefined, 200],
  ['a list holding its ETag holds', (etag) => `"other", ${etag}`, undefined, 200],
  ['* holds', () => '*', undefined, 200],
  ['another tag fails', () => '"other"', undefined, 412],
  ['its weak ETag fails (strong comparison)', (etag) => `W/${etag}`, undefined, 412],
  ['a value outside the grammar fails', () => 'garbage', undefined, 412],
  ['failing, it wins over a matching If-None-Match', () => '"other"', (etag) => etag, 412],
  ['holding, If-None-Match with its ETag still makes a 304', (etag) => etag, (etag) => etag, 304],
];

describe.each(['/v1.1', '/v1.1/openapi.json', '/v1.1/docs'])(
  'If-Match on %s, by the synthesized template and by the local gateway alike',
  (path) => {
    test.each(
      IF_MATCH_CASES.flatMap(([name, ifMatch, ifNoneMatch, status]) =>
        ['GET', 'HEAD'].map((method) => [method, name, ifMatch, ifNoneMatch, status] as const),
      ),
    )('%s, If-Match: %s', async (method, _, ifMatch, ifNoneMatch, status) => {
      // Each side's own tag: the docs page differs (deployed, Redoc from the CDN; locally from the local API), so do their tags.
      const conditions = (etag: string) => ({ 'If-Match': ifMatch(etag), ...(ifNoneMatch ? { 'If-None-Match': ifNoneMatch(etag) } : {}) });
      const deployedTag = (await deployedAnswer(deployedMock(path, 'GET'), request('GET', {}))).headers.ETag ?? '';
      const deployed = await deployedAnswer(deployedMock(path, method), request(method, conditions(deployedTag)));
      const localTag = (await local('GET', path, {})).headers.etag ?? '';
      const observed = await local(method, path, conditions(localTag));
      const expected = {
        status: deployed.statusCode,
        headers: pick(deployed.headers),
        body: method === 'HEAD' ? '' : (deployed.body ?? ''),
      };
      if (localTag === deployedTag) expect(observed).toEqual(expected);
      else {
        // The same answer but for the tag, and for a 200 the page itself.
        const asDeployed = (answer: Observed, tag: string) => ({
          ...answer,
          headers: { ...answer.headers, etag: '<tag>' },
          body: answer.status === 200 ? '<page>' : answer.body.replaceAll(tag.slice(1, -1), '<tag>'),
        });
        expect(asDeployed(observed, localTag)).toEqual(asDeployed(expected, deployedTag));
      }
      expect(observed.status).toBe(status);
      if (status === 412) {
        expect(observed.headers['content-type']).toBe('application/problem+json');
        expect(observed.headers.etag).toBe(localTag); // which tag is current
        if (method === 'GET')
          expect(JSON.parse(observed.body)).toMatchObject({ status: 412, type: 'https://museum.example/problems/precondition-failed' });
      }
    });
  },
);

describe('the synthesized gateway responses, evaluated per request, answer as the local gateway does', () => {
  test.each(ORIGIN_CASES)(
    'UNAUTHORIZED to %s: the problem, the Basic challenge, and no CORS header (two origins cannot be chosen from statically)',
    async (_, originHeaders) => {
      const response = Object.values(resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse'))
        .map(
          (resource) =>
            resource.Properties as {
              ResponseType: string;
              StatusCode: string;
              ResponseParameters: Record<string, string>;
              ResponseTemplates: Record<string, string>;
            },
        )
        .find((properties) => properties.ResponseType === 'UNAUTHORIZED');
      if (!response) throw new Error('No UNAUTHORIZED gateway response');
      const vtl = request('GET', originHeaders);
      const headers: Record<string, string> = {};
      for (const [name, mapping] of Object.entries(response.ResponseParameters)) {
        const value = headerMapping(mapping, vtl);
        if (value !== undefined) headers[name.replace('gatewayresponse.header.', '')] = value;
      }
      const deployed: Observed = {
        status: Number(response.StatusCode),
        headers: pick(headers),
        body: (await velocity.render(response.ResponseTemplates['application/json'] ?? '', vtl)).body,
      };
      expect(await local('GET', '/v1.1/special-events', originHeaders)).toEqual(deployed);
      expect(deployed.headers['access-control-allow-origin']).toBeUndefined();
    },
  );
});

/** Every template the stack deploys: integration responses' and gateway responses'. */
function synthesizedTemplates(): string[] {
  const methods = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')).flatMap(
    (resource) =>
      (resource.Properties as { Integration?: { IntegrationResponses?: { ResponseTemplates?: Record<string, string> }[] } }).Integration
        ?.IntegrationResponses ?? [],
  );
  const gatewayResponses = Object.values(resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse')).map(
    (resource) => resource.Properties as { ResponseTemplates?: Record<string, string> },
  );
  return [...methods, ...gatewayResponses].flatMap(({ ResponseTemplates }) => Object.values(ResponseTemplates ?? {}));
}

/** Each `#set($name = expression)` of `text`, with the text before it (parentheses and quotes balanced). */
function setDirectives(text: string): { name: string; expression: string; before: string }[] {
  const found: { name: string; expression: string; before: string }[] = [];
  for (const match of text.matchAll(/#set\(\s*\$([\w.-]+)\s*=/g)) {
    let depth = 1;
    let quote: string | undefined;
    let end = match.index + match[0].length;
    for (; end < text.length && depth > 0; end++) {
      const character = text[end] as string;
      if (quote) quote = character === quote ? undefined : quote;
      else if (character === '"' || character === "'") quote = character;
      else if (character === '(') depth++;
      else if (character === ')') depth--;
    }
    found.push({
      name: match[1] as string,
      expression: text.slice(match.index + match[0].length, end - 1).trim(),
      before: text.slice(0, match.index),
    });
  }
  return found;
}

/** Java and JavaScript differ under Velocity: each probe runs in both engines. */
const PROBES: [string, string, 'agree' | 'differ'][] = [
  ['#if("") is false', '#if("")yes#{else}no#end', 'agree'],
  ["a string's length()", "#set($s = 'abc')$s.length()", 'agree'],
  ["a string's matches()", "#set($s = 'abc')#if($s.matches('a.*'))yes#{else}no#end|#if($s.matches('b'))yes#{else}no#end", 'agree'],
  // Single-quoted: Velocity 1.7 has no escapes in string literals.
  ['$util.escapeJavaScript', `$util.escapeJavaScript('say "hi" a/b \\ \u00e9\u2028 tab\t')|$util.escapeJavaScript("it's")`, 'agree'],
  ['#set to null (Apache Velocity keeps the old value)', "#set($a = 'x')#set($a = $nothing)[$a]", 'differ'],
  ['integer division (Apache Velocity truncates)', '#set($d = 7 / 2)$d', 'differ'],
];

test.each(PROBES)('%s: the local engine (velocityjs) and Apache Velocity %s', async (_, probe, expected) => {
  const local = runMappingTemplate(probe, request('GET', {})).body;
  const apache = (await velocity.render(probe, request('GET', {}))).body;
  expect([local === apache ? 'agree' : 'differ', local, apache]).toEqual([expected, local, expected === 'agree' ? local : apache]);
});

test('the synthesized templates avoid what the engines do differently: no division, and a variable is set again only when it is empty', () => {
  const templates = synthesizedTemplates();
  expect(templates.length).toBeGreaterThan(10);
  for (const text of templates) {
    const assigned = new Set<string>();
    for (const { name, expression, before } of setDirectives(text)) {
      // Division outside string literals would truncate in Apache Velocity only.
      expect([name, expression.replace(/"[^"]*"|'[^']*'/g, '').includes('/')]).toEqual([name, false]);
      // A second #set whose value may be null keeps the old value in Apache Velocity only: safe when the old one is empty.
      const literal = /^(?:true|false|-?\d+|"[^"$]*"|'[^']*')$/.test(expression);
      if (assigned.has(name) && !literal) expect([name, before.endsWith(`#if("$!${name}" == "")`)]).toEqual([name, true]);
      assigned.add(name);
    }
  }
});
