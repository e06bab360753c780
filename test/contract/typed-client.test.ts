// A typed client as docs/API.md ("Typed clients") tells a client to make one: openapi-typescript
// generates the types from the served document (`GET /v1.1/openapi.json`), openapi-fetch calls the
// API with them, and code that reads `error.type` after every operation compiles under
// `tsc --strict`. openapi-fetch types an operation's `error` as the union of the content of every
// error status it documents, so one member that is not a problem (API Gateway's own text, a
// `{"message"}`) and `error.type` no longer compiles. Both tools run as a client runs them, as
// processes, in a directory of the test run's scratch directory.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { PROBLEM_TYPE_BASE } from '../../functions/events/problems.ts';
import { testEnvironment } from '../support/test-environment.ts';

const run = promisify(execFile);

// An OpenAPI document read as JSON.
type Json = Record<string, any>;

interface Operation {
  path: string;
  method: string;
  operationId: string;
  /** Required parameters by location (`path`, `query`, `header`), their names. */
  required: Record<string, string[]>;
  /** The request body's first example, when the operation takes a body. */
  body: { example: unknown } | undefined;
}

function operationsOf(document: Json): Operation[] {
  const resolveRef = (object: Json): Json =>
    typeof object.$ref === 'string'
      ? object.$ref
          .slice(2)
          .split('/')
          .reduce<Json>((node, key) => node[key] as Json, document)
      : object;
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([, operation]) => typeof operation === 'object' && (operation as Json).responses)
      .map(([method, operation]) => {
        const parameters = [...((item as Json).parameters ?? []), ...((operation as Json).parameters ?? [])].map(resolveRef);
        const required: Record<string, string[]> = {};
        for (const parameter of parameters.filter((p) => p.required))
          (required[parameter.in as string] ??= []).push(parameter.name as string);
        const requestBody = (operation as Json).requestBody ? resolveRef((operation as Json).requestBody as Json) : undefined;
        const media = requestBody ? (Object.values(requestBody.content as Json)[0] as Json) : undefined;
        const example = media
          ? ((Object.values((media.examples ?? {}) as Json)[0] as Json | undefined)?.value ?? media.example)
          : undefined;
        return {
          path,
          method: method.toUpperCase(),
          operationId: String((operation as Json).operationId),
          required,
          body: media ? { example } : undefined,
        };
      }),
  );
}

/** A client module: one function per operation that calls it and reads the problem of its error. */
function clientSource(operations: Operation[]): string {
  const lines = [
    "import createClient from 'openapi-fetch';",
    "import type { paths } from './api.js';",
    // `error` must be a real type, not `any` (which would let anything compile).
    'type NotAny<T> = 0 extends 1 & T ? never : T;',
    `type ProblemType = \`${PROBLEM_TYPE_BASE}\${string}\`;`,
    "const client = createClient<paths>({ baseUrl: 'https://api.museum.example/v1.1' });",
  ];
  for (const operation of operations) {
    const params = Object.entries(operation.required)
      .map(
        ([where, names]) =>
          `${where}: { ${names.map((name) => `${JSON.stringify(name)}: '6f1e8a57-5d1c-4b8e-9b35-2f7d8e4c1a90'`).join(', ')} }`,
      )
      .join(', ');
    const init = [
      ...(params ? [`params: { ${params} }`] : []),
      // The body's value is not what is checked: the document's example where it has one.
      ...(operation.body ? [`body: ${operation.body.example === undefined ? '{} as never' : JSON.stringify(operation.body.example)}`] : []),
    ];
    lines.push(
      `export async function ${operation.operationId}(): Promise<ProblemType | undefined> {`,
      `  const { error } = await client.${operation.method}(${JSON.stringify(operation.path)}${init.length ? `, { ${init.join(', ')} }` : ''});`,
      '  const checked: NotAny<typeof error> = error;',
      '  if (!checked) return undefined;',
      '  const status: number = checked.status;',
      '  const title: string = checked.title;',
      '  const type: ProblemType = checked.type;',
      '  console.log(status, title, checked.detail);',
      '  return type;',
      '}',
    );
  }
  return `${lines.join('\n')}\n`;
}

let work: string | undefined;

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

test('a client generated from the served document with openapi-typescript and openapi-fetch reads `error.type` after every operation under tsc --strict', async () => {
  const documentUrl = `${testEnvironment().url}/openapi.json`;
  const document = (await (await fetch(documentUrl)).json()) as Json;
  const operations = operationsOf(document);
  expect(operations.length).toBeGreaterThanOrEqual(14);
  work = await mkdtemp(join(tmpdir(), 'museum-typed-client-'));
  // The client's project resolves openapi-fetch and TypeScript's lib files from ours.
  await symlink(resolve('node_modules'), join(work, 'node_modules'), 'dir');
  await writeFile(join(work, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(
    join(work, 'tsconfig.json'),
    JSON.stringify({
      // tsc --init's defaults for a module project, strict; only the libraries' .d.ts files unchecked.
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'nodenext',
        target: 'es2022',
        lib: ['es2022', 'dom'],
        types: [],
        skipLibCheck: true,
      },
      files: ['client.ts'],
    }),
  );
  await writeFile(join(work, 'client.ts'), clientSource(operations));
  // As API.md says: npx openapi-typescript <the served document> -o api.ts
  await run(resolve('node_modules/.bin/openapi-typescript'), [documentUrl, '-o', join(work, 'api.ts')], {
    cwd: work,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off' },
  });
  const compiled = await run(resolve('node_modules/.bin/tsc'), ['-p', work], { cwd: work }).then(
    () => ({ errors: '' }),
    (error: unknown) => ({ errors: (error as { stdout?: string }).stdout || (error as Error).message }),
  );
  expect(compiled.errors).toBe('');
}, 120_000);
