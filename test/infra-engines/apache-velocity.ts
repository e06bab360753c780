// Apache Velocity, the engine API Gateway runs mapping templates with, as a second engine for the
// stack's synthesized templates: Debian's `velocity` package (1.7) driven by a small Java runner
// (apache-velocity/ApacheVelocityRunner.java, started once per test file with Java's single-file
// source launcher). The local gateway runs the same templates with velocityjs; comparing the two
// over the requests the local gateway answers is what keeps the local engine honest. Missing, it
// fails the tests: `.ci/run` installs it (`apt-get install velocity`).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import type { MockAnswer } from '../../lib/openapi/mock-answers.ts';

/** The jars of Debian's `velocity` and its dependencies (`dpkg -L velocity libcommons-lang-java libcommons-collections3-java`). */
export const VELOCITY_CLASSPATH = [
  '/usr/share/java/velocity.jar',
  '/usr/share/java/commons-lang.jar',
  '/usr/share/java/commons-collections3.jar',
];

const RUNNER = fileURLToPath(new URL('apache-velocity/ApacheVelocityRunner.java', import.meta.url));

export interface VelocityRequest {
  method: string;
  /** Header lines as sent; a repeated name keeps its last value, as `$input.params()` does. */
  headers: readonly (readonly [string, string])[];
  /** `$context.error.messageString` of a gateway response (a quoted JSON string). */
  errorMessage?: string;
}

export interface VelocityAnswer {
  body: string;
  status?: string;
  headers: Record<string, string>;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const unb64 = (text: string) => Buffer.from(text, 'base64').toString('utf8');

export class ApacheVelocity {
  private readonly java: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<number, { resolve: (answer: VelocityAnswer) => void; reject: (error: Error) => void }>();
  private next = 0;

  private constructor() {
    const missing = VELOCITY_CLASSPATH.filter((jar) => !existsSync(jar));
    if (missing.length > 0)
      throw new Error(`Apache Velocity is not installed (${missing.join(', ')} missing): apt-get install velocity (.ci/run installs it)`);
    this.java = spawn('java', ['-cp', VELOCITY_CLASSPATH.join(':'), RUNNER], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    this.java.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    this.java.once('exit', (code) => {
      for (const { reject } of this.waiting.values()) reject(new Error(`Apache Velocity's runner exited (${code}): ${stderr}`));
      this.waiting.clear();
    });
    createInterface({ input: this.java.stdout }).on('line', (line) => {
      const [id = '', outcome, ...fields] = line.split(' ');
      const waiter = this.waiting.get(Number(id));
      if (!waiter) return;
      this.waiting.delete(Number(id));
      if (outcome !== 'OK') {
        waiter.reject(new Error(unb64(fields[0] ?? '')));
        return;
      }
      const [status = '-', body = '', count = '0', ...pairs] = fields;
      const headers: Record<string, string> = {};
      for (let i = 0; i < Number(count); i++) headers[unb64(pairs[2 * i] ?? '')] = unb64(pairs[2 * i + 1] ?? '');
      waiter.resolve({ body: unb64(body), ...(status === '-' ? {} : { status: unb64(status) }), headers });
    });
  }

  static start(): ApacheVelocity {
    return new ApacheVelocity();
  }

  /** Renders `template` for `request`: the body, and `$context.responseOverride`'s status and headers. Rejects where API Gateway answers 5XX. */
  render(template: string, request: VelocityRequest): Promise<VelocityAnswer> {
    const id = this.next++;
    const fields = [
      String(id),
      b64(template),
      b64(request.method),
      request.errorMessage === undefined ? '-' : b64(request.errorMessage),
      String(request.headers.length),
      ...request.headers.flatMap(([name, value]) => [b64(name), b64(value)]),
    ];
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.java.stdin.write(`${fields.join(' ')}\n`);
    });
  }

  async close(): Promise<void> {
    if (this.java.exitCode !== null) return;
    const exited = new Promise((resolve) => this.java.once('exit', resolve));
    this.java.stdin.end();
    const timer = setTimeout(() => this.java.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * A MOCK integration's answer as API Gateway composes it, with Apache Velocity running the
 * template: the integration response's status and header mappings (a static `'value'` or a copy of
 * `method.request.header.Name`: api-gateway-swagger-extensions-gateway-responses.gatewayResponse.html),
 * `Content-Type: application/json` by default (api-gateway-known-issues.html), then the template's
 * `$context.responseOverride`; no body for 204, 304 or HEAD.
 */
export async function mockAnswerByApacheVelocity(
  velocity: ApacheVelocity,
  answer: MockAnswer,
  request: VelocityRequest,
): Promise<{ statusCode: number; headers: Record<string, string>; body?: string }> {
  const rendered = answer.template === undefined ? { body: '', headers: {} } : await velocity.render(answer.template, request);
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  for (const [name, mapping] of Object.entries(answer.headers)) {
    const value = headerMapping(mapping, request);
    if (value !== undefined) headers[name] = value;
  }
  Object.assign(headers, rendered.headers);
  const statusCode = 'status' in rendered && rendered.status !== undefined ? Number(rendered.status) : answer.statusCode;
  const noContent = statusCode === 204 || statusCode === 304 || request.method === 'HEAD';
  return { statusCode, headers, ...(noContent || rendered.body === '' ? {} : { body: rendered.body }) };
}

/** A header mapping's value for `request`: a static `'value'`, or the last line of the header it copies (none: no header). */
export function headerMapping(mapping: string, request: VelocityRequest): string | undefined {
  if (mapping.startsWith("'") && mapping.endsWith("'")) return mapping.slice(1, -1);
  const prefix = 'method.request.header.';
  if (!mapping.startsWith(prefix)) throw new Error(`${mapping} is neither a static value nor a request header`);
  return request.headers.findLast(([name]) => name === mapping.slice(prefix.length))?.[1];
}
