// Does a build adjustment (a stand-in in scripts/lambda-shims/ or a flag in scripts/build.ts) pay
// for itself in cold start? Builds the functions as `npm run build` does (A) and once without each
// adjustment (B), then measures cold starts in paired rounds: in every round each comparison runs
// A and B back to back, in alternating order, for each function, so that whatever the machine's
// other processes do falls on both alike; the figure is the median of the per-round differences
// B - A with a bootstrap interval. Positive: the adjustment saves that much.
//
//   npm exec -- node --import tsx bench/cold-start/paired.ts [--rounds 40] [--warm-up 3]
//     [--functions get-special-event,list-special-events] [--only credential-provider-env-only,...]
//     [--against NAME=DIR ...]
//
// --against compares as built with functions built elsewhere (DIR holds <function>/index.mjs), for
// example from a copy of the tree with one code shape changed; --only '' leaves out the adjustments.
//
// Node 24 (npm exec puts the node@24 devDependency first on PATH): the runs use this process's Node.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { BUILD_ADJUSTMENTS, buildFunctions, FUNCTION_NAMES } from '../../scripts/build.ts';
import { proxyEvent } from '../support/api-events.ts';
import { withBenchDynamoDb } from '../support/bench-dynamodb.ts';
import { eventBody, loadEvents, sampleEvent } from '../support/bench-tables.ts';
import { runChild } from '../support/child-process.ts';
import { functionEnvironment } from '../support/function-environment.ts';
import { median, pairedDifference, round, type PairedDifference } from '../support/stats.ts';

const DIRECTORY = resolve('bench-results/build-adjustments');
const AS_BUILT = 'as built';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '40' },
    'warm-up': { type: 'string', default: '3' },
    functions: { type: 'string', default: 'get-special-event,list-special-events' },
    only: { type: 'string', default: BUILD_ADJUSTMENTS.join(',') },
    against: { type: 'string', multiple: true, default: [] },
  },
});
const rounds = Number(args.rounds);
const warmUpRounds = Number(args['warm-up']);
const functions = args.functions.split(',');
const against = new Map(args.against.map((entry) => [entry.slice(0, entry.indexOf('=')), resolve(entry.slice(entry.indexOf('=') + 1))]));
const adjustments = [...args.only.split(',').filter(Boolean), ...against.keys()];
for (const name of functions)
  if (!FUNCTION_NAMES.includes(name)) throw new Error(`Unknown function ${name}: one of ${FUNCTION_NAMES.join(', ')}`);
for (const name of adjustments.filter((adjustment) => !against.has(adjustment))) {
  if (!(BUILD_ADJUSTMENTS as readonly string[]).includes(name))
    throw new Error(`Unknown build adjustment ${name}: one of ${BUILD_ADJUSTMENTS.join(', ')}`);
}

interface Run {
  initMs: number;
  nodeStartMs: number;
  loadMs: number;
  firstInvocationMs: number;
  outcome: number | string;
}

const started = performance.now();
const step = (message: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}\n`);
const loadBefore = loadavg();

step(`Building the functions as built and without each of: ${adjustments.join(', ')}`);
await mkdir(DIRECTORY, { recursive: true });
const variants = [AS_BUILT, ...adjustments];
const variantDirectory = (variant: string) =>
  against.get(variant) ?? join(DIRECTORY, variant === AS_BUILT ? 'as-built' : `without-${variant}`, 'functions');
// One at a time: each build already bundles every function in parallel.
for (const variant of variants.filter((name) => !against.has(name)))
  await buildFunctions(variantDirectory(variant), variant === AS_BUILT ? [] : [variant]);
const runner = join(DIRECTORY, 'cold-start-runner.mjs');
await build({
  entryPoints: ['bench/cold-start/runner.ts'],
  outfile: runner,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  logLevel: 'warning',
});
const bundleOf = (variant: string, name: string) => join(variantDirectory(variant), name, 'index.mjs');
const sizes = Object.fromEntries(
  await Promise.all(
    variants.flatMap((variant) =>
      functions.map(async (name) => {
        const file = bundleOf(variant, name);
        return [`${variant}/${name}`, { bytes: (await stat(file)).size, gzipBytes: gzipSync(await readFile(file)).length }] as const;
      }),
    ),
  ),
);

const results = await withBenchDynamoDb(async ({ endpoint, tables }) => {
  const existing = sampleEvent(['2030-01-10', '2030-01-11'], 'Paired cold start subject');
  await loadEvents(endpoint, tables.events, [existing]);
  const events: Record<string, () => unknown> = {
    'get-special-event': () => proxyEvent('getSpecialEvent', { eventId: existing.eventId }),
    'list-special-events': () => proxyEvent('listSpecialEvents'),
    'create-special-event': () =>
      proxyEvent('createSpecialEvent', { body: eventBody('Paired cold start', 2030), headers: { 'Idempotency-Key': randomUUID() } }),
  };
  for (const name of functions)
    if (!events[name]) throw new Error(`No first invocation defined here for ${name}: one of ${Object.keys(events).join(', ')}`);

  const coldStart = async (variant: string, name: string): Promise<Run> => {
    const run = await runChild<Run>([runner], {
      env: {
        ...functionEnvironment(endpoint, tables, name),
        BENCH_COLD_START: JSON.stringify({ bundle: bundleOf(variant, name), functionName: name, kind: 'handler', event: events[name]?.() }),
      },
      logFile: join(DIRECTORY, 'cold-starts.log'),
    });
    if (![200, 201].includes(Number(run.outcome)))
      throw new Error(`${name} (${variant}) answered ${run.outcome}: see ${DIRECTORY}/cold-starts.log`);
    return run;
  };

  // differences[adjustment][function]: B (without it) - A (as built), one per round.
  const pairs = new Map(
    adjustments.map((adjustment) => [adjustment, new Map(functions.map((name) => [name, [] as { a: Run; b: Run }[]]))]),
  );
  const loads: number[] = [];
  step(
    `DynamoDB Local ready; ${warmUpRounds} warm-up rounds, then ${rounds} paired rounds of ${adjustments.length} comparisons x ${functions.length} functions`,
  );
  for (let roundIndex = 0; roundIndex < warmUpRounds + rounds; roundIndex++) {
    const counted = roundIndex >= warmUpRounds;
    if (roundIndex % 5 === 0)
      step(`round ${roundIndex + 1}/${warmUpRounds + rounds}${counted ? '' : ' (warm-up)'}; load ${loadavg()[0]?.toFixed(2)}`);
    // Rotate which comparison goes first, and alternate A/B order within each pair.
    const order = adjustments.map((_, i) => adjustments[(i + roundIndex) % adjustments.length] as string);
    for (const [position, adjustment] of order.entries()) {
      for (const name of functions) {
        const aFirst = (roundIndex + position) % 2 === 0;
        const first = await coldStart(aFirst ? AS_BUILT : adjustment, name);
        const second = await coldStart(aFirst ? adjustment : AS_BUILT, name);
        if (counted)
          pairs
            .get(adjustment)
            ?.get(name)
            ?.push(aFirst ? { a: first, b: second } : { a: second, b: first });
      }
    }
    if (counted) loads.push(loadavg()[0] ?? Number.NaN);
  }
  return { pairs, loads };
});

interface Comparison {
  adjustment: string;
  function: string;
  rounds: number;
  bytesAsBuilt?: number;
  bytesWithout?: number;
  medianInitAsBuiltMs: number;
  medianInitWithoutMs: number;
  /** B minus as built, init (process start to first response). */
  initDifference: PairedDifference;
  /** B minus as built, from the bundle's import to the first response: init without Node's own start, which no bundle changes. */
  bundleDifference: PairedDifference;
  /** B minus as built, the bundle's import alone. */
  loadDifference: PairedDifference;
  /** B minus as built, the first invocation alone. */
  firstInvocationDifference: PairedDifference;
  /** Each round's pair, init and init after Node's start (ms). */
  samples: { a: [number, number]; b: [number, number] }[];
}

const comparisons: Comparison[] = [];
for (const [adjustment, byFunction] of results.pairs) {
  const all = [...byFunction.values()].flat();
  for (const [name, pairs] of [...byFunction.entries(), ['all', all] as const]) {
    const diff = (pick: (run: Run) => number) => {
      const value = pairedDifference(pairs.map(({ a, b }) => pick(b) - pick(a)));
      return { ...value, median: round(value.median, 2), low: round(value.low, 2), high: round(value.high, 2) };
    };
    comparisons.push({
      adjustment,
      function: name,
      rounds: pairs.length,
      bytesAsBuilt: sizes[`${AS_BUILT}/${name}`]?.bytes,
      bytesWithout: sizes[`${adjustment}/${name}`]?.bytes,
      medianInitAsBuiltMs: round(median(pairs.map(({ a }) => a.initMs)), 1),
      medianInitWithoutMs: round(median(pairs.map(({ b }) => b.initMs)), 1),
      initDifference: diff((run) => run.initMs),
      bundleDifference: diff((run) => run.initMs - run.nodeStartMs),
      loadDifference: diff((run) => run.loadMs),
      firstInvocationDifference: diff((run) => run.firstInvocationMs),
      samples: pairs.map(({ a, b }) => ({
        a: [round(a.initMs, 2), round(a.initMs - a.nodeStartMs, 2)],
        b: [round(b.initMs, 2), round(b.initMs - b.nodeStartMs, 2)],
      })),
    });
  }
}

const interval = (d: PairedDifference) => `${d.median.toFixed(2)} [${d.low.toFixed(2)}, ${d.high.toFixed(2)}]`;
const lines = [
  `Cold start of B (built without the adjustment, or the --against build) minus as built (ms; median of ${rounds} paired rounds [95% bootstrap interval]; positive: as built is faster)`,
  '',
  '| B | Function | Bytes as built | Bytes B | Init as built | Init B | Init difference | after Node start | of which load | of which first invocation | As built faster (after Node start)? |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...comparisons.map((c) =>
    [
      c.adjustment,
      c.function,
      c.bytesAsBuilt ?? '',
      c.bytesWithout ?? '',
      c.medianInitAsBuiltMs,
      c.medianInitWithoutMs,
      interval(c.initDifference),
      interval(c.bundleDifference),
      interval(c.loadDifference),
      interval(c.firstInvocationDifference),
      c.bundleDifference.low > 0 ? 'yes' : c.bundleDifference.high < 0 ? 'no: B is faster' : 'not shown',
    ]
      .join(' | ')
      .replace(/^/, '| ')
      .replace(/$/, ' |'),
  ),
];
const loadAfter = loadavg();
const load = {
  before: loadBefore.map((value) => round(value, 2)),
  after: loadAfter.map((value) => round(value, 2)),
  oneMinuteDuringRounds: {
    min: round(Math.min(...results.loads), 2),
    median: round(median(results.loads), 2),
    max: round(Math.max(...results.loads), 2),
  },
};
lines.push(
  '',
  `Node ${process.version}; load average (1/5/15 min) ${load.before.join(' ')} before, ${load.after.join(' ')} after; ` +
    `1-minute load during the rounds ${load.oneMinuteDuringRounds.min}-${load.oneMinuteDuringRounds.max} (median ${load.oneMinuteDuringRounds.median}); ` +
    `${round((performance.now() - started) / 1000, 0)} s.`,
);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
await writeFile(
  join(DIRECTORY, `paired-${stamp}.json`),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rounds, warmUpRounds, functions, adjustments, load, sizes, comparisons }, null, 2)}\n`,
);
console.log(lines.join('\n'));
