// Warm latency through the local HTTP server: real requests over a keep-alive connection to the
// local API gateway, which runs the authorizer (cached after the first call, as API Gateway
// caches it) and the handler bundles.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { openSync, closeSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { basicAuthorization, BENCH_PRINCIPAL } from '../support/api-events.ts';
import { BENCH_PASSWORD, loadEvents, sampleEvent } from '../support/bench-tables.ts';
import { summarise, type LatencySummary } from '../support/stats.ts';
import { newEventBody } from './operations.ts';

export interface HttpResult {
  name: string;
  latency: LatencySummary;
}

interface HttpResponse {
  status: number;
  body: string;
}

export interface HttpServer {
  url: string;
  stop(): Promise<void>;
}

export async function startHttpServer(env: Record<string, string>, functionsDirectory: string, logFile: string): Promise<HttpServer> {
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/warm/http-server.ts'], {
    env: { ...env, BENCH_FUNCTIONS_DIRECTORY: functionsDirectory },
    stdio: ['ignore', log, 'pipe'],
  });
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\S+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`The local API exited with ${code}:\n${output}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function measureHttp(
  url: string,
  endpoint: string,
  table: string,
  options: { iterations: number; warmUp: number },
): Promise<HttpResult[]> {
  const calls = options.iterations + options.warmUp;
  const readSubject = sampleEvent(['2032-01-10'], 'HTTP read subject');
  const updateSubject = sampleEvent(['2032-01-12'], 'HTTP update subject');
  const datesSubject = sampleEvent(['2032-01-14'], 'HTTP dates subject');
  const toDelete = Array.from({ length: calls }, () => sampleEvent(['2032-02-01', '2032-02-08']));
  await loadEvents(endpoint, table, [readSubject, updateSubject, datesSubject, ...toDelete], 8);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const authorization = basicAuthorization(BENCH_PRINCIPAL, BENCH_PASSWORD);
  const base = new URL(url);

  const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    new Promise<HttpResponse>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const outgoing = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method,
          path: `${base.pathname}${path}`,
          headers: {
            Authorization: authorization,
            ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
            ...headers,
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
          response.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(payload);
    });

  let price = 0;
  let moves = 0;
  let deleted = 0;
  const operations: { name: string; expectedStatus: number; call: () => Promise<HttpResponse> }[] = [
    { name: 'get', expectedStatus: 200, call: () => send('GET', `/special-events/${readSubject.eventId}`) },
    { name: 'list (default page)', expectedStatus: 200, call: () => send('GET', '/special-events') },
    { name: 'create', expectedStatus: 201, call: () => send('POST', '/special-events', newEventBody()) },
    {
      name: 'create (Idempotency-Key)',
      expectedStatus: 201,
      call: () => send('POST', '/special-events', newEventBody(), { 'Idempotency-Key': randomUUID() }),
    },
    {
      name: 'update (price)',
      expectedStatus: 200,
      call: () => send('PATCH', `/special-events/${updateSubject.eventId}`, { price: (price += 1) % 1000 }),
    },
    {
      name: 'update (dates)',
      expectedStatus: 200,
      // Moved back and forth between two days: every call removes one index item and writes another.
      call: () =>
        send('PATCH', `/special-events/${datesSubject.eventId}`, { dates: [(moves += 1) % 2 === 1 ? '2032-01-15' : '2032-01-14'] }),
    },
    { name: 'delete', expectedStatus: 204, call: () => send('DELETE', `/special-events/${toDelete[deleted++]?.eventId}`) },
  ];

  const results: HttpResult[] = [];
  try {
    for (const operation of operations) {
      process.stderr.write(`  HTTP: ${operation.name}\n`);
      const samples: number[] = [];
      for (let i = 0; i < calls; i++) {
        const started = performance.now();
        const response = await operation.call();
        const elapsed = performance.now() - started;
        if (response.status !== operation.expectedStatus)
          throw new Error(`HTTP ${operation.name} answered ${response.status}: ${response.body}`);
        if (i >= options.warmUp) samples.push(elapsed);
      }
      results.push({ name: operation.name, latency: summarise(samples) });
    }
  } finally {
    agent.destroy();
  }
  return results;
}
