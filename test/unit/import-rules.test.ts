// Dependencies point one way: the handlers use the domain and the store; the CDK app,
// the local emulator and the OpenAPI generator use functions/; nothing in the product uses test/
// or bench/, and bench/ uses nothing of test/ (tests may use bench/); and the CDK app and the
// generator load neither the AWS SDK, nor middy, nor Powertools. Every folder of functions/ and
// lib/ has its rule: a folder these rules do not know fails. Read from the sources' runtime
// imports (test/unit/import-graph.ts), so a new import that breaks a rule fails here, naming the
// file and the import. docs/DEVELOPMENT.md ("Dependency rules") says the same in prose.
import { importGraph, productFiles, runtimeClosure, subfolders, type ImportEdge } from './import-graph.ts';

const graph = importGraph();
const localEdges = graph.filter((edge) => !edge.isPackage);

function describeEdges(edges: ImportEdge[]): string {
  return edges.map((edge) => `  ${edge.from} imports '${edge.specifier}' (${edge.to})`).join('\n');
}

/** Fails with every offending import listed, one a line, and what the rule is. */
function expectNoEdges(edges: ImportEdge[], rule: string): void {
  if (edges.length > 0) throw new Error(`${rule}\nBroken by:\n${describeEdges(edges)}`);
}

const under = (folder: string) => (file: string) => file.startsWith(`${folder}/`);

test('the graph is read: every source folder has files with imports', () => {
  for (const folder of ['functions', 'lib', 'bin', 'scripts']) expect(graph.some((edge) => edge.from.startsWith(`${folder}/`))).toBe(true);
});

test('nothing in functions/, lib/, bin/ or scripts/ imports test/ or bench/', () => {
  expectNoEdges(
    localEdges.filter((edge) => under('test')(edge.to) || under('bench')(edge.to)),
    'The product must not depend on its tests or benchmarks: move what both need into the product (or the test into test/).',
  );
});

test('functions/ imports nothing from lib/, bin/ or scripts/', () => {
  expectNoEdges(
    localEdges.filter((edge) => under('functions')(edge.from) && !under('functions')(edge.to)),
    'The deployed code (functions/) is what everything else builds on: it must not import the CDK app, the emulator, the generator or the scripts.',
  );
});

/**
 * The folders of functions/, each with its job and what it may import beside its own files and
 * packages. A new folder gets a row here and a line in docs/DEVELOPMENT.md's dependency rules.
 * The top-level files are not folders: routes.ts (the route table), observability.ts (logger
 * and metrics) and environment.ts (the one reader of required environment variables) import
 * nothing local; deployment.ts (how the API is deployed), route-matching.ts (which route a
 * request reaches, Allow and CORS method lists) and unrouted-functions.ts (the authorizer and
 * webhook functions) only routes.ts; config.ts (the wiring of environment to stores) and the
 * handlers sit on top and may import any of functions/. config.ts is the one file that builds
 * stores: the only one in functions/ that imports the shared DynamoDB client.
 */
const FUNCTION_FOLDERS: Record<string, { job: string; mayImport: string[] }> = {
  'functions/events': { job: 'the domain', mayImport: [] },
  'functions/changes': {
    job: 'the change feed: items, cursor',
    mayImport: ['functions/events/', 'functions/routes.ts', 'functions/deployment.ts'],
  },
  'functions/store': { job: 'DynamoDB reads and writes', mayImport: ['functions/events/', 'functions/changes/'] },
  'functions/auth': { job: 'users and credentials', mayImport: ['functions/store/', 'functions/events/', 'functions/routes.ts'] },
  'functions/http': {
    job: 'the edge',
    mayImport: ['functions/events/', 'functions/routes.ts', 'functions/route-matching.ts', 'functions/observability.ts'],
  },
  'functions/webhooks': {
    job: 'subscriptions, secrets and deliveries',
    mayImport: [
      'functions/environment.ts',
      'functions/store/',
      'functions/changes/',
      'functions/events/',
      'functions/http/',
      'functions/routes.ts',
      'functions/observability.ts',
    ],
  },
  'functions/calendar': {
    job: 'calendar feeds: tokens, the feed store, iCalendar',
    mayImport: ['functions/store/', 'functions/changes/', 'functions/events/', 'functions/auth/', 'functions/http/'],
  },
};

test('every folder of functions/ has a rule, and every rule a folder', () => {
  expect(Object.keys(FUNCTION_FOLDERS).sort()).toEqual(subfolders('functions'));
});

const mayImport = (allowed: string[]) => (target: string) =>
  allowed.some((prefix) => (prefix.endsWith('/') ? target.startsWith(prefix) : target === prefix));

test.each(Object.entries(FUNCTION_FOLDERS))('%s/ imports only its own files and the layers below it', (folder, rule) => {
  const allowed = mayImport([`${folder}/`, ...rule.mayImport]);
  expectNoEdges(
    localEdges.filter((edge) => under(folder)(edge.from) && !allowed(edge.to)),
    `${folder}/ (${rule.job}) may import only ${[`${folder}/`, ...rule.mayImport].join(', ')}.`,
  );
});

test('the stores are built in one place: in functions/, only config.ts imports the shared DynamoDB client', () => {
  expectNoEdges(
    localEdges.filter(
      (edge) => under('functions')(edge.from) && edge.from !== 'functions/config.ts' && edge.to === 'functions/store/dynamodb-client.ts',
    ),
    'functions/config.ts builds every store from the environment (the table, the shared client): take the store from there.',
  );
});

test.each(['functions/routes.ts', 'functions/observability.ts', 'functions/environment.ts'])('%s imports nothing local', (file) => {
  expectNoEdges(
    localEdges.filter((edge) => edge.from === file),
    `${file} may import packages only.`,
  );
});

test.each(['functions/deployment.ts', 'functions/route-matching.ts', 'functions/unrouted-functions.ts'])(
  '%s imports only functions/routes.ts',
  (file) => {
    expectNoEdges(
      localEdges.filter((edge) => edge.from === file && edge.to !== 'functions/routes.ts'),
      `${file} may import packages and functions/routes.ts only.`,
    );
  },
);

test('bench/ imports nothing from test/ (tests may import bench/)', () => {
  const benchEdges = importGraph(['bench']).filter((edge) => !edge.isPackage);
  expect(benchEdges.length).toBeGreaterThan(10);
  expectNoEdges(
    benchEdges.filter((edge) => under('test')(edge.to)),
    'A benchmark must not depend on the tests: what both need lives in bench/support/.',
  );
});

/**
 * The four jobs of lib/, each in its folder: the OpenAPI generator builds on functions/ alone; the
 * CDK app and the local emulator use it (both serve the document) but not each other; the
 * operator CLIs' modules (the store they open, events export and import) use functions/ and the
 * local emulator's DynamoDB Local; none of them uses bin/ or scripts/.
 */
const LIB_FOLDERS: { folder: string; mayImport: string[] }[] = [
  { folder: 'lib/openapi', mayImport: ['functions/', 'lib/openapi/'] },
  { folder: 'lib/cdk', mayImport: ['functions/', 'lib/cdk/', 'lib/openapi/'] },
  { folder: 'lib/local', mayImport: ['functions/', 'lib/local/', 'lib/openapi/'] },
  { folder: 'lib/cli', mayImport: ['functions/', 'lib/cli/', 'lib/local/'] },
];

test('every file in lib/ is in one of its four folders, and each folder has a rule', () => {
  expect(
    productFiles()
      .filter(under('lib'))
      .filter((file) => !LIB_FOLDERS.some(({ folder }) => file.startsWith(`${folder}/`))),
  ).toEqual([]);
  expect(LIB_FOLDERS.map(({ folder }) => folder).sort()).toEqual(subfolders('lib'));
});

test.each(LIB_FOLDERS.map((rule) => [rule.folder, rule] as const))(
  '%s/ imports only functions/ and the lib/ folders below it',
  (folder, rule) => {
    expectNoEdges(
      localEdges.filter((edge) => edge.from.startsWith(`${folder}/`) && !rule.mayImport.some((prefix) => edge.to.startsWith(prefix))),
      `${folder}/ may import only ${rule.mayImport.join(', ')}.`,
    );
  },
);

/** What runs in Lambda, never while synthesizing the app or writing the document. */
const LAMBDA_RUNTIME_PACKAGES = ['@aws-sdk/', '@smithy/', '@middy/', '@aws-lambda-powertools/'];

test.each(['bin/app.ts', 'scripts/generate-openapi.ts'])('%s loads neither the AWS SDK, nor middy, nor Powertools', (entry) => {
  const closure = runtimeClosure(entry, graph);
  expect(closure.size).toBeGreaterThan(3);
  const chains = [...closure.entries()]
    .filter(([target]) => LAMBDA_RUNTIME_PACKAGES.some((prefix) => target.startsWith(prefix)))
    .map(([, chain]) => `  ${chain.join(' > ')}`);
  if (chains.length > 0) {
    throw new Error(
      `${entry} must not load ${LAMBDA_RUNTIME_PACKAGES.join(', ')} (use \`import type\`, or import from a module without them):\n${chains.join('\n')}`,
    );
  }
});
