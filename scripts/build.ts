// Bundles each handler and the authorizer into dist/functions/<name>/index.mjs: one minified ESM
// file per function, the AWS SDK included (tree-shaken bundles initialise faster than the
// runtime's SDK). The local API, the tests, the benchmark and the CDK stack all use these files.
//
// `npm run build` rebuilds only when an input changed (scripts/build-stamp.ts); `--force` or
// FORCE_BUILD=1 rebuilds anyway. Each build writes esbuild's metafiles beside the bundles
// (dist/functions.meta.json), which test/unit/bundle-guard.test.ts reads.
import { build, type BuildOptions, type BuildResult, type Metafile, type Plugin } from 'esbuild';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { routes } from '../functions/routes.ts';
import { AUTHORIZER_HANDLER, WEBHOOK_FUNCTIONS } from '../functions/unrouted-functions.ts';
import { BUILD_DIRECTORY, inputsHash, readBuildMeta, type BuildMeta } from './build-stamp.ts';

export const FUNCTION_NAMES = [
  ...routes.map((route) => route.handler),
  AUTHORIZER_HANDLER,
  ...Object.values(WEBHOOK_FUNCTIONS).map((fn) => fn.handler),
];

/**
 * A guard against accidents, not a budget: about twice the largest bundle (261 KB when the guard
 * was set), so that only something like a whole second SDK client or credential chain slipping in
 * trips it. Bundle size is a benchmark figure (bench/report.ts); what it stands for is the cold
 * start, which the benchmark measures and holds to its own targets.
 */
export const BUNDLE_GUARD_BYTES = 500_000;

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const shimFile = (file: string) => fileURLToPath(new URL(`./lambda-shims/${file}`, import.meta.url));

export interface LambdaShim {
  /** The package (or package export) that a Lambda function never needs in full. */
  module: string;
  /** Its stand-in in scripts/lambda-shims/ (the file says why); only the stand-in may import the real module. */
  shim: string;
  /** Packages (or package exports) none of whose files may be in a bundle while the stand-in applies. */
  keepsOut: string[];
}

/** SDK packages replaced by a small stand-in, by package name only: never by a file inside a package. */
export const LAMBDA_SHIMS: LambdaShim[] = [
  {
    module: '@aws-sdk/credential-provider-node',
    shim: shimFile('credential-provider-env-only.ts'),
    // The whole default chain and the STS/SSO clients it builds: an SDK that reaches any of them by
    // another path than this package shows up here (and in the cold start: +46 ms measured).
    keepsOut: [
      '@aws-sdk/credential-provider-node',
      '@aws-sdk/credential-provider-ini',
      '@aws-sdk/credential-provider-sso',
      '@aws-sdk/credential-provider-process',
      '@aws-sdk/credential-provider-web-identity',
      '@aws-sdk/credential-provider-http',
      '@aws-sdk/credential-provider-login',
      '@aws-sdk/token-providers',
      '@aws-sdk/nested-clients/sts',
      '@aws-sdk/nested-clients/sso',
      '@aws-sdk/nested-clients/sso-oidc',
      '@aws-sdk/nested-clients/signin',
      '@smithy/credential-provider-imds',
    ],
  },
];

/** A stand-in's name: its file in scripts/lambda-shims/ without the extension. */
export const shimName = (shim: LambdaShim) => basename(shim.shim, '.ts');

/** Everything the build does beyond esbuild's own bundling, by name; the cold-start comparison (bench/cold-start/paired.ts) builds bundles without one of them. */
export const BUILD_ADJUSTMENTS = LAMBDA_SHIMS.map(shimName);

function lambdaShims(without: readonly string[]): Plugin {
  const shims = LAMBDA_SHIMS.filter((entry) => !without.includes(shimName(entry)));
  return {
    name: 'lambda-shims',
    setup(pluginBuild) {
      if (shims.length > 0) {
        const byModule = new Map(shims.map((entry) => [entry.module, entry.shim]));
        const names = shims.map((entry) => entry.module.replace(/[/.]/g, '\\$&'));
        pluginBuild.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => {
          const replacement = byModule.get(args.path);
          return replacement === undefined || args.importer === replacement ? undefined : { path: replacement };
        });
      }
    },
  };
}

/**
 * The esbuild settings of every Lambda bundle; the benchmark builds its floor bundle with them too.
 * `without` names BUILD_ADJUSTMENTS to leave out: only the cold-start comparison uses it.
 */
export function lambdaBundleOptions(entryPoint: string, outfile: string, without: readonly string[] = []): BuildOptions {
  return {
    entryPoints: [entryPoint],
    outfile,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    mainFields: ['module', 'main'],
    sourcemap: true,
    sourcesContent: false,
    // License notices go to index.mjs.LEGAL.txt beside the bundle rather than into it.
    legalComments: 'external',
    plugins: [lambdaShims(without)],
    logLevel: 'warning',
    metafile: true,
    // Some CommonJS dependencies call require() for Node built-ins; ESM has no require of its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  };
}

export function bundleLambda(entryPoint: string, outfile: string, without: readonly string[] = []): Promise<BuildResult> {
  return build(lambdaBundleOptions(entryPoint, outfile, without));
}

/** Where each keepsOut module resolves from the project root (null: it does not resolve, so the guard cannot check it). */
async function keptOutEntries(shims: readonly LambdaShim[]): Promise<Record<string, string | null>> {
  const entries: Record<string, string | null> = {};
  await build({
    stdin: { contents: '', resolveDir: ROOT },
    // Resolved as the bundles resolve them (the files for Node, ESM first).
    platform: 'node',
    format: 'esm',
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'resolve-kept-out',
        setup(pluginBuild) {
          pluginBuild.onStart(async () => {
            for (const module of shims.flatMap((entry) => entry.keepsOut)) {
              const { path, errors } = await pluginBuild.resolve(module, { kind: 'import-statement', resolveDir: ROOT });
              entries[module] = errors.length === 0 ? relative(ROOT, path) : null;
            }
          });
        },
      },
    ],
  });
  return entries;
}

export const metaFileOf = (outdir: string) => `${outdir.replace(/[\\/]$/, '')}.meta.json`;

/** Builds every function into outdir and writes their metafiles (with the inputs' hash) to metaFileOf(outdir). */
export async function buildFunctions(outdir = `${BUILD_DIRECTORY}/functions`, without: readonly string[] = []): Promise<BuildMeta> {
  // The old stamp goes first: a build that fails half-way must not leave bundles that look current.
  await rm(metaFileOf(outdir), { force: true });
  await rm(outdir, { recursive: true, force: true });
  const results = await Promise.all(
    FUNCTION_NAMES.map((name) => bundleLambda(`functions/${name}.ts`, `${outdir}/${name}/index.mjs`, without)),
  );
  const metafiles: Record<string, Metafile> = {};
  FUNCTION_NAMES.forEach((name, index) => {
    const metafile = results[index]?.metafile;
    if (metafile) metafiles[name] = metafile;
  });
  // Hashed after the build, so that it covers every local file the bundles were made from.
  const hash = await inputsHash(lambdaBundleOptions('', '', without), metafiles);
  const shims = LAMBDA_SHIMS.filter((shim) => !without.includes(shimName(shim)));
  const meta: BuildMeta = {
    inputsHash: hash,
    builtAt: new Date().toISOString(),
    shims,
    keptOutEntries: await keptOutEntries(shims),
    metafiles,
  };
  await mkdir(dirname(metaFileOf(outdir)), { recursive: true });
  await writeFile(metaFileOf(outdir), JSON.stringify(meta));
  return meta;
}

/**
 * Rebuilds one function's bundle in outdir (the local run's --watch, after its sources changed) and
 * returns the bundle's local inputs now. The stamp goes first: bundles rebuilt one at a time are no
 * longer one build, so the next start builds them all again. A build error leaves the bundle as it
 * was (esbuild writes nothing) and is thrown.
 */
export async function rebuildFunction(name: string, outdir = `${BUILD_DIRECTORY}/functions`): Promise<string[]> {
  await rm(metaFileOf(outdir), { force: true });
  const result = await bundleLambda(`functions/${name}.ts`, `${outdir}/${name}/index.mjs`);
  return localInputs(result.metafile);
}

/** The files outside node_modules that a bundle was made from. */
export function localInputs(metafile: Metafile | undefined): string[] {
  return Object.keys(metafile?.inputs ?? {}).filter((path) => !/(^|[\\/])node_modules[\\/]/.test(path));
}

/**
 * The last build's metafiles if its stamp matches the inputs now (functions/**, scripts/build.ts,
 * scripts/build-stamp.ts, scripts/lambda-shims/**, package-lock.json, the esbuild options and every other local file the
 * last bundles were made from) and its bundles exist; otherwise undefined.
 */
export async function upToDateBuild(outdir = `${BUILD_DIRECTORY}/functions`): Promise<BuildMeta | undefined> {
  const last = await readBuildMeta(metaFileOf(outdir));
  if (!last) return undefined;
  const current = await inputsHash(lambdaBundleOptions('', ''), last.metafiles);
  return current === last.inputsHash && (await bundlesExist(outdir)) ? last : undefined;
}

/** Builds `outdir` (dist/functions) unless upToDateBuild() finds it current; `force` (or FORCE_BUILD=1) rebuilds anyway. */
export async function buildIfStale(options: { force?: boolean; outdir?: string } = {}): Promise<'built' | 'up to date'> {
  const force = options.force === true || process.env.FORCE_BUILD === '1';
  const outdir = options.outdir ?? `${BUILD_DIRECTORY}/functions`;
  if (!force && (await upToDateBuild(outdir))) return 'up to date';
  await buildFunctions(outdir);
  return 'built';
}

async function bundlesExist(outdir: string): Promise<boolean> {
  const present = await Promise.all(
    FUNCTION_NAMES.map((name) =>
      readFile(`${outdir}/${name}/index.mjs`).then(
        () => true,
        () => false,
      ),
    ),
  );
  return present.every(Boolean);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const started = performance.now();
  const outcome = await buildIfStale({ force: process.argv.includes('--force') });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  // On stderr: cdk.json's app command runs this build, and `cdk synth` prints the template on stdout.
  console.error(
    outcome === 'built'
      ? `build: built ${FUNCTION_NAMES.length} bundles into ${BUILD_DIRECTORY}/functions in ${seconds} s`
      : `build: up to date (inputs unchanged since the last build; --force or FORCE_BUILD=1 rebuilds), checked in ${seconds} s`,
  );
}
