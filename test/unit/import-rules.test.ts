// Dependencies point one way: the handlers use the domain and the store; the CDK app,
// the local emulator and the OpenAPI generator use functions/; nothing in the product uses test/
// or bench/; and the CDK app and the generator load neither the AWS SDK, nor middy, nor
// Powertools. Read from the sources' runtime imports (test/unit/import-graph.ts), so a new import
// that breaks a rule fails here, naming the file and the import.
import { importGraph, productFiles, runtimeClosure, type ImportEdge } from './import-graph.ts';

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
 * The layers inside functions/, each with the folders and files it may import (beside packages).
 * The handlers, config.ts (the wiring of environment to store and auth) and observability.ts sit
 * on top and are not listed: the handlers may import any of functions/.
 */
const LAYERS: { layer: string; files: (file: string) => boolean; mayImport: string[] }[] = [
  { layer: 'functions/routes.ts (the route table)', files: (file) => file === 'functions/routes.ts', mayImport: [] },
  { layer: 'functions/observability.ts (logger and metrics)', files: (file) => file === 'functions/observability.ts', mayImport: [] },
  { layer: 'functions/events/ (the domain)', files: under('functions/events'), mayImport: ['functions/events/'] },
  {
    layer: 'functions/changes/ (the change feed: items, cursor)',
    files: under('functions/changes'),
    mayImport: ['functions/changes/', 'functions/events/', 'functions/routes.ts'],
  },
  {
    layer: 'functions/store/',
    files: under('functions/store'),
    mayImport: ['functions/store/', 'functions/events/', 'functions/changes/'],
  },
  {
    layer: 'functions/auth/',
    files: under('functions/auth'),
    mayImport: ['functions/auth/', 'functions/store/', 'functions/events/', 'functions/routes.ts'],
  },
  {
    layer: 'functions/http/ (the edge)',
    files: under('functions/http'),
    mayImport: ['functions/http/', 'functions/events/', 'functions/routes.ts', 'functions/observability.ts'],
  },
];

test.each(LAYERS.map((rule) => [rule.layer, rule] as const))('%s imports only the layers below it', (_, rule) => {
  const allowed = (target: string) =>
    rule.mayImport.some((prefix) => (prefix.endsWith('/') ? target.startsWith(prefix) : target === prefix));
  expectNoEdges(
    localEdges.filter((edge) => rule.files(edge.from) && !allowed(edge.to)),
    `${rule.layer} may import only ${rule.mayImport.length > 0 ? rule.mayImport.join(', ') : 'packages, nothing local'}.`,
  );
});

/**
 * The three jobs of lib/, each in its folder: the OpenAPI generator builds on functions/ alone; the
 * CDK app and the local emulator use it (both serve the document) but not each other, and none of
 * them uses bin/ or scripts/.
 */
const LIB_FOLDERS: { folder: string; mayImport: string[] }[] = [
  { folder: 'lib/openapi', mayImport: ['functions/', 'lib/openapi/'] },
  { folder: 'lib/cdk', mayImport: ['functions/', 'lib/cdk/', 'lib/openapi/'] },
  { folder: 'lib/local', mayImport: ['functions/', 'lib/local/', 'lib/openapi/'] },
];

test('every file in lib/ is in one of its three folders', () => {
  expect(
    productFiles()
      .filter(under('lib'))
      .filter((file) => !LIB_FOLDERS.some(({ folder }) => file.startsWith(`${folder}/`))),
  ).toEqual([]);
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
