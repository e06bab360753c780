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
import { mergeScriptCovs, type ScriptCov } from '@bcoe/v8-coverage';
import libCoverage, { type CoverageMap } from 'istanbul-lib-coverage';
import libReport from 'istanbul-lib-report';
import reports from 'istanbul-reports';
import v8ToIstanbul from 'v8-to-istanbul';
import { CHILD_COVERAGE_DIRECTORY, FAST_CHILD_COVERAGE_DIRECTORY, TIER_COVERAGE_DIRECTORIES } from './coverage-paths.ts';

const ROOT = resolve('.');
const PRODUCT = /^(functions|lib|bin|scripts)\//;

type SourceMap = Extract<NonNullable<Parameters<typeof v8ToIstanbul>[2]>, { originalSource: string }>['sourceMap']['sourcemap'];
interface SourceMapEntry {
  lineLengths: number[];
  data: SourceMap;
}

interface V8Coverage {
  result: ScriptCov[];
  /** Present when the process had source maps on: tsx's maps of the TypeScript it ran (bin/, lib/local/, ...). */
  'source-map-cache'?: Record<string, SourceMapEntry>;
}

/**
 * One script of ours as the processes ran it, its V8 counts summed over all of them. The same file
 * run by tsx and by Node's own type stripping has two offset spaces, so two entries.
 */
interface RanScript {
  coverage: ScriptCov;
  /** tsx's map of the file (undefined: a bundle, which reads its own, or a file run by type stripping). */
  map: SourceMapEntry | undefined;
}

const isBundle = (url: string) => /\/dist\/functions\/[^/]+\/index\.mjs$/.test(url);

/**
 * Which of a process's scripts are ours, and in which offset space: a bundle reads its own source
 * map; a file run by tsx uses tsx's map from the coverage (as c8 does); a file with no map there
 * was run by Node's own type stripping, which blanks the types out, so every offset V8 reports is
 * the file's own. That is every file of a process without tsx, and the entry of a local Lambda
 * environment's thread (lib/local/lambda-environment-worker.ts), whose coverage holds the map of
 * the bundle it runs but none of its own.
 */
function ranScriptKey(url: string, cache: V8Coverage['source-map-cache']): string | undefined {
  if (!url.startsWith('file://')) return undefined;
  if (isBundle(url)) return url;
  if (!PRODUCT.test(relative(ROOT, fileURLToPath(url)))) return undefined;
  return cache?.[url] ? `tsx ${url}` : `stripped ${url}`;
}

/**
 * The V8 coverage of every child process, merged per script before any is converted (as c8
 * does): hundreds of processes ran the same bundles and files, and converting a bundle (its
 * source map holds the SDK) is the expensive step.
 */
async function childCoverage(): Promise<CoverageMap> {
  const ran = new Map<string, RanScript>();
  for (const directory of [FAST_CHILD_COVERAGE_DIRECTORY, CHILD_COVERAGE_DIRECTORY].map((folder) => resolve(folder))) {
    const files = await readdir(directory).catch(() => []);
    for (const file of files.filter((name) => name.endsWith('.json'))) await addChildFile(ran, join(directory, file));
  }
  const map = libCoverage.createCoverageMap({});
  for (const { coverage, map: sourceMap } of ran.values()) await mergeConverted(map, coverage, sourceMap);
  return map;
}

async function addChildFile(ran: Map<string, RanScript>, file: string): Promise<void> {
  const coverage = JSON.parse(await readFile(file, 'utf8')) as V8Coverage;
  const cache = coverage['source-map-cache'];
  for (const script of coverage.result) {
    const key = ranScriptKey(script.url, cache);
    if (key === undefined) continue;
    // A bundle built into a test's scratch directory (local-run-watch builds its own) is gone with
    // it: nothing left to map it with.
    if (isBundle(script.url) && !existsSync(fileURLToPath(script.url))) continue;
    const earlier = ran.get(key);
    const merged = earlier ? mergeScriptCovs([earlier.coverage, script]) : script;
    if (merged) ran.set(key, { coverage: merged, map: earlier?.map ?? cache?.[script.url] });
  }
}

async function mergeConverted(map: CoverageMap, script: ScriptCov, sourceMap: SourceMapEntry | undefined): Promise<void> {
  const path = fileURLToPath(script.url);
  // tsx keeps only the transpiled text's line lengths, which are all the offsets need.
  const converter = sourceMap
    ? v8ToIstanbul(path, 0, {
        source: sourceMap.lineLengths.map((length) => '.'.repeat(length)).join('\n'),
        originalSource: await readFile(path, 'utf8'),
        sourceMap: { sourcemap: sourceMap.data },
      })
    : v8ToIstanbul(path);
  await converter.load();
  converter.applyCoverage(script.functions);
  for (const [file, data] of Object.entries(converter.toIstanbul())) {
    if (PRODUCT.test(relative(ROOT, file))) map.merge({ [file]: data });
  }
  converter.destroy();
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
// Read before the merge below: a CoverageMap keeps the file coverage objects of the first map it
// merges and adds the next ones into them, so the child coverage would land in jestMap too.
const jestFigure = percent(jestMap);
const child = await childCoverage();
const merged = libCoverage.createCoverageMap({});
merged.merge(jestMap);
merged.merge(child);
// Keep only product files; the handler bundles also map to node_modules, which is not ours.
merged.filter((path) => PRODUCT.test(relative(ROOT, path)));

console.log(`\nCoverage of functions/, lib/, bin/ and scripts/ over the ${tiers.join(' and ')} tier (no threshold):`);
console.log(`  jest's own processes: ${jestFigure}; with the child processes: ${percent(merged)}`);
reports.create('text-summary').execute(libReport.createContext({ coverageMap: merged, dir: 'coverage' }));
const lowest = merged
  .files()
  .map((path) => ({ path: relative(ROOT, path), lines: merged.fileCoverageFor(path).toSummary().lines }))
  .filter(({ lines }) => lines.total >= 20)
  .sort((a, b) => a.lines.pct - b.lines.pct)
  .slice(0, 10);
console.log('Lowest (files of 20 lines or more, by line coverage):');
for (const { path, lines } of lowest) console.log(`  ${lines.pct.toFixed(1).padStart(5)} %  ${path} (${lines.covered}/${lines.total})`);
