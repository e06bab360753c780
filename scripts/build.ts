// Bundles each handler and the authorizer into dist/functions/<name>/index.mjs: one minified ESM
// file per function, the AWS SDK included (tree-shaken bundles initialise faster than the
// runtime's SDK). The local API, the tests, the benchmark and the CDK stack all use these files.
import { build, type BuildOptions, type BuildResult, type Plugin } from 'esbuild';
import { readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AUTHORIZER_HANDLER, routes } from '../functions/shared/routes.ts';

export const FUNCTION_NAMES = [...routes.map((route) => route.handler), AUTHORIZER_HANDLER];

const shim = (file: string) => fileURLToPath(new URL(`./lambda-shims/${file}`, import.meta.url));

/**
 * SDK modules that a Lambda function never runs, each replaced by a small stand-in (the files
 * say why). Only the stand-in itself may import the real module.
 */
const LAMBDA_SHIMS: Record<string, string> = {
  '@aws-sdk/credential-provider-node': shim('credential-provider-env-only.ts'),
  '@aws-sdk/middleware-endpoint-discovery': shim('endpoint-discovery-config-only.ts'),
  '@smithy/core/event-streams': shim('no-event-streams.ts'),
};

/** The same for a file inside a package: the importing file, the import, its stand-in. */
const LAMBDA_FILE_SHIMS = [
  { importer: /[\\/]@smithy[\\/]core[\\/].*[\\/]sha256[\\/]Sha256Node\.js$/, path: './Sha256Js', shim: shim('no-sha256-js-fallback.ts') },
  { importer: /[\\/]@smithy[\\/]core[\\/].*[\\/]regionConfig[\\/]config\.js$/, path: './getInstanceMetadataRegion', shim: shim('no-imds-region.ts') },
  {
    importer: /[\\/]@smithy[\\/]core[\\/].*[\\/]defaults-mode[\\/]resolveDefaultsModeConfig\.js$/,
    path: '../config-resolver/regionConfig/getInstanceMetadataRegion',
    shim: shim('no-imds-region.ts'),
  },
  {
    importer: /[\\/]@smithy[\\/]core[\\/].*[\\/]middleware-retry[\\/]configurations\.js$/,
    path: '../util-retry/AdaptiveRetryStrategy',
    shim: shim('no-adaptive-retry.ts'),
  },
  {
    importer: /[\\/]@smithy[\\/]core[\\/].*[\\/]middleware-endpoint[\\/]adaptors[\\/]getEndpointFromInstructions\.js$/,
    path: '../service-customizations',
    shim: shim('no-s3-endpoint-params.ts'),
  },
  { importer: /[\\/]@smithy[\\/]signature-v4[\\/].*[\\/]SignatureV4\.js$/, path: './HeaderFormatter', shim: shim('no-event-header-formatter.ts') },
];

/**
 * Packages whose modules only declare what they export, but whose package.json does not say so
 * (no "sideEffects": false): esbuild keeps every module they import, used or not. The Document
 * client's index loads its paginators (top-level createPaginator calls), which bring in ScanCommand
 * and its schemas, about 1.6 KB that no function uses.
 */
const SIDE_EFFECT_FREE_PACKAGES = /[\\/]node_modules[\\/]@aws-sdk[\\/]lib-dynamodb[\\/]/;

/** SDK clients import their whole package.json only to put its version in the User-Agent. */
const SDK_CLIENT_PACKAGE_JSON = /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]package\.json$/;

const lambdaShims: Plugin = {
  name: 'lambda-shims',
  setup(pluginBuild) {
    const names = Object.keys(LAMBDA_SHIMS).map((name) => name.replace(/[/.]/g, '\\$&'));
    pluginBuild.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => {
      const replacement = LAMBDA_SHIMS[args.path] as string;
      return args.importer === replacement ? undefined : { path: replacement };
    });
    for (const fileShim of LAMBDA_FILE_SHIMS) {
      const filter = new RegExp(`^${fileShim.path.replace(/[/.]/g, '\\$&')}$`);
      pluginBuild.onResolve({ filter }, (args) => (fileShim.importer.test(args.importer) ? { path: fileShim.shim } : undefined));
    }
    pluginBuild.onResolve({ filter: /^(@aws-sdk\/lib-dynamodb$|\.)/ }, async (args) => {
      if (args.pluginData === SIDE_EFFECT_FREE_PACKAGES) return undefined;
      if (args.path.startsWith('.') && !SIDE_EFFECT_FREE_PACKAGES.test(args.importer)) return undefined;
      const { path, errors } = await pluginBuild.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: SIDE_EFFECT_FREE_PACKAGES,
      });
      return errors.length === 0 && SIDE_EFFECT_FREE_PACKAGES.test(path) ? { path, sideEffects: false } : undefined;
    });
    pluginBuild.onLoad({ filter: SDK_CLIENT_PACKAGE_JSON }, async (args) => {
      const { name, version } = JSON.parse(await readFile(args.path, 'utf8')) as { name: string; version: string };
      return { contents: JSON.stringify({ name, version }), loader: 'json' };
    });
  },
};

/** The esbuild settings of every Lambda bundle; the benchmark builds its floor bundle with them too. */
export function lambdaBundleOptions(entryPoint: string, outfile: string): BuildOptions {
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
    plugins: [lambdaShims],
    logLevel: 'warning',
    // Some CommonJS dependencies call require() for Node built-ins; ESM has no require of its own.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  };
}

export function bundleLambda(entryPoint: string, outfile: string, extra: BuildOptions = {}): Promise<BuildResult> {
  return build({ ...lambdaBundleOptions(entryPoint, outfile), ...extra });
}

export async function buildFunctions(outdir = 'dist/functions', extra: BuildOptions = {}): Promise<BuildResult[]> {
  await rm(outdir, { recursive: true, force: true });
  return Promise.all(FUNCTION_NAMES.map((name) => bundleLambda(`functions/${name}.ts`, `${outdir}/${name}/index.mjs`, extra)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildFunctions();
}
