// Run after each tier's jest (`npm test`, `npm run test:system`): prints one coverage figure for
// the product code (functions/, lib/, bin/, scripts/) over every tier that has run, and the files
// where it is lowest. It merges jest's own coverage of each tier (v8 provider,
// coverage/<tier>/coverage-final.json: the code the test files load) with the V8 coverage of the
// Node processes the tiers start: the fast tier's synthesis of the CDK app
// (coverage/fast-child-processes-v8/: lib/cdk/ and what it imports, run by Node's own type
// stripping) and the system tier's (coverage/child-processes-v8/: the local APIs, whose handlers
// run the bundles of dist/functions, mapped back to functions/*.ts through their source maps; the
// local runs, the users and events CLIs, run by tsx). Jest's reporters run before its global
// teardown stops the local APIs, hence a step of its own. `npm test` starts from an empty
// coverage/, so after `.ci/run` the figure is over both tiers of one run. No threshold.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import libCoverage, { type CoverageMap } from 'istanbul-lib-coverage';
import libReport from 'istanbul-lib-report';
import reports from 'istanbul-reports';
import v8ToIstanbul from 'v8-to-istanbul';
import { CHILD_COVERAGE_DIRECTORY, FAST_CHILD_COVERAGE_DIRECTORY, TIER_COVERAGE_DIRECTORIES } from './coverage-paths.ts';

const ROOT = resolve('.');
const PRODUCT = /^(functions|lib|bin|scripts)\//;

type SourceMap = Extract<NonNullable<Parameters<typeof v8ToIstanbul>[2]>, { originalSource: string }>['sourceMap']['sourcemap'];

interface V8Coverage {
  result: { url: string; functions: Parameters<ReturnType<typeof v8ToIstanbul>['applyCoverage']>[0] }[];
  /** Present when the process had source maps on: tsx's maps of the TypeScript it ran (bin/, lib/local/, ...). */
  'source-map-cache'?: Record<string, { lineLengths: number[]; data: SourceMap }>;
}

/**
 * A converter for a script: a bundle reads its own source map; a file run by tsx uses the map from
 * the coverage (as c8 does); a file of a process without tsx (which turns source maps on, so
 * without any map) was run by Node's own type stripping, which blanks the types out: every offset
 * V8 reports is the file's own.
 */
async function converterFor(url: string, cache: V8Coverage['source-map-cache']) {
  const path = fileURLToPath(url);
  // A bundle that is gone was built into a test's scratch directory (local-run-watch builds its
  // own), which the test removed: nothing left to map it with.
  if (/\/dist\/functions\/[^/]+\/index\.mjs$/.test(url)) return existsSync(path) ? v8ToIstanbul(path) : undefined;
  const cached = cache?.[url];
  if (!PRODUCT.test(relative(ROOT, path))) return undefined;
  if (!cached) return cache === undefined ? v8ToIstanbul(path) : undefined;
  // The transpiled text is not kept, only its line lengths, which are all the offsets need.
  const source = cached.lineLengths.map((length) => '.'.repeat(length)).join('\n');
  return v8ToIstanbul(path, 0, { source, originalSource: await readFile(path, 'utf8'), sourceMap: { sourcemap: cached.data } });
}

/** A jest worker's own file, skipped unparsed: jest reports what its workers ran (coverage/<tier>/). */
const isJestWorker = (text: string) => text.includes('/node_modules/jest-worker/build/');

async function childCoverage(): Promise<CoverageMap> {
  const map = libCoverage.createCoverageMap({});
  for (const directory of [FAST_CHILD_COVERAGE_DIRECTORY, CHILD_COVERAGE_DIRECTORY].map((folder) => resolve(folder))) {
    const files = await readdir(directory).catch(() => []);
    for (const file of files.filter((name) => name.endsWith('.json'))) await mergeChildFile(map, join(directory, file));
  }
  return map;
}

async function mergeChildFile(map: CoverageMap, file: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  if (isJestWorker(text)) return;
  const coverage = JSON.parse(text) as V8Coverage;
  for (const script of coverage.result.filter((entry) => entry.url.startsWith('file://'))) {
    const converter = await converterFor(script.url, coverage['source-map-cache']);
    if (!converter) continue;
    await converter.load();
    converter.applyCoverage(script.functions);
    const mapped = converter.toIstanbul();
    for (const [path, data] of Object.entries(mapped)) {
      if (PRODUCT.test(relative(ROOT, path))) map.merge({ [path]: data });
    }
    converter.destroy();
  }
}

function percent(map: CoverageMap): string {
  const lines = map.getCoverageSummary().lines;
  return `${lines.pct.toFixed(1)} % of lines (${lines.covered} of ${lines.total})`;
}

const jestMap = libCoverage.createCoverageMap({});
const tiers: string[] = [];
for (const [tier, directory] of Object.entries(TIER_COVERAGE_DIRECTORIES)) {
  const text = await readFile(join(directory, 'coverage-final.json'), 'utf8').catch(() => undefined);
  if (text === undefined) continue;
  jestMap.merge(JSON.parse(text) as libCoverage.CoverageMapData);
  tiers.push(tier);
}
const child = await childCoverage();
const merged = libCoverage.createCoverageMap({});
merged.merge(jestMap);
merged.merge(child);
// Keep only product files; the handler bundles also map to node_modules, which is not ours.
merged.filter((path) => PRODUCT.test(relative(ROOT, path)));

console.log(`\nCoverage of functions/, lib/, bin/ and scripts/ over the ${tiers.join(' and ')} tier (no threshold):`);
console.log(`  jest's own processes: ${percent(jestMap)}; with the child processes: ${percent(merged)}`);
reports.create('text-summary').execute(libReport.createContext({ coverageMap: merged, dir: 'coverage' }));
const lowest = merged
  .files()
  .map((path) => ({ path: relative(ROOT, path), lines: merged.fileCoverageFor(path).toSummary().lines }))
  .filter(({ lines }) => lines.total >= 20)
  .sort((a, b) => a.lines.pct - b.lines.pct)
  .slice(0, 10);
console.log('Lowest (files of 20 lines or more, by line coverage):');
for (const { path, lines } of lowest) console.log(`  ${lines.pct.toFixed(1).padStart(5)} %  ${path} (${lines.covered}/${lines.total})`);
