// Builds everything the benchmark loads into bench-results/build: the function bundles exactly
// as `npm run build` makes them (so a running `npm start` or test run keeps its dist/), the
// floor and raw-operation bundles with the same settings, and the cold-start runner.
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { bundleLambda, buildFunctions, FUNCTION_NAMES } from '../../scripts/build.ts';

export const BUILD_DIRECTORY = resolve('bench-results/build');
export const FUNCTIONS_DIRECTORY = join(BUILD_DIRECTORY, 'functions');
export const FLOOR_NAME = 'floor';
export const AUTHORIZER_FLOOR_NAME = 'authorizer-floor';

export interface BundleSize {
  name: string;
  bytes: number;
  gzipBytes: number;
}

export interface BenchBuild {
  bundles: Record<string, string>;
  rawOperations: string;
  coldStartRunner: string;
  sizes: BundleSize[];
}

export async function buildForBench(): Promise<BenchBuild> {
  await buildFunctions(FUNCTIONS_DIRECTORY);
  const floor = join(BUILD_DIRECTORY, FLOOR_NAME, 'index.mjs');
  const authorizerFloor = join(BUILD_DIRECTORY, AUTHORIZER_FLOOR_NAME, 'index.mjs');
  const rawOperations = join(BUILD_DIRECTORY, 'raw-operations', 'index.mjs');
  const coldStartRunner = join(BUILD_DIRECTORY, 'cold-start-runner.mjs');
  await Promise.all([
    bundleLambda('bench/baseline/floor.ts', floor),
    bundleLambda('bench/baseline/authorizer-floor.ts', authorizerFloor),
    bundleLambda('bench/baseline/raw-operations.ts', rawOperations),
    build({
      entryPoints: ['bench/cold-start/runner.ts'],
      outfile: coldStartRunner,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node24',
      logLevel: 'warning',
    }),
  ]);
  const bundles: Record<string, string> = Object.fromEntries(
    FUNCTION_NAMES.map((name) => [name, join(FUNCTIONS_DIRECTORY, name, 'index.mjs')]),
  );
  bundles[FLOOR_NAME] = floor;
  bundles[AUTHORIZER_FLOOR_NAME] = authorizerFloor;
  const sizes = await Promise.all(
    Object.entries(bundles).map(async ([name, file]) => ({
      name,
      bytes: (await stat(file)).size,
      gzipBytes: gzipSync(await readFile(file)).length,
    })),
  );
  return { bundles, rawOperations, coldStartRunner, sizes };
}
