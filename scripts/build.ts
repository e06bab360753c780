// Bundles each handler and the authorizer into dist/functions/<name>/index.mjs: one minified ESM
// file per function, the AWS SDK included (tree-shaken bundles initialise faster than the
// runtime's SDK). The local API, the tests, the benchmark and the CDK stack all use these files.
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import { AUTHORIZER_HANDLER, routes } from '../functions/shared/routes.ts';

export const FUNCTION_NAMES = [...routes.map((route) => route.handler), AUTHORIZER_HANDLER];

export async function buildFunctions(outdir = 'dist/functions'): Promise<void> {
  await rm(outdir, { recursive: true, force: true });
  await Promise.all(
    FUNCTION_NAMES.map((name) =>
      build({
        entryPoints: { [`${name}/index`]: `functions/${name}.ts` },
        outdir,
        outExtension: { '.js': '.mjs' },
        bundle: true,
        minify: true,
        format: 'esm',
        platform: 'node',
        target: 'node24',
        mainFields: ['module', 'main'],
        sourcemap: true,
        sourcesContent: false,
        alias: { '@aws-sdk/credential-provider-node': './scripts/lambda-shims/credential-provider-env-only.ts' },
        logLevel: 'warning',
        // Some CommonJS dependencies call require() for Node built-ins; ESM has no require of its own.
        banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
      }),
    ),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildFunctions();
}
