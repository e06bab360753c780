// The build's guard: the SDK stand-ins of scripts/lambda-shims/ still apply and no bundle has grown
// by an accident, read from esbuild's metafiles (dist/functions.meta.json). A renamed or
// restructured SDK package otherwise makes a stand-in silently stop applying, and the bundles and
// cold starts grow (the full credential chain adds about 140 KB), with every other test still green.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildMeta } from '../../scripts/build-stamp.ts';
import { buildFunctions, BUNDLE_GUARD_BYTES, FUNCTION_NAMES, upToDateBuild } from '../../scripts/build.ts';
import { defaultProvider } from '../../scripts/lambda-shims/credential-provider-env-only.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHIM_DIRECTORY = 'scripts/lambda-shims';

let meta: BuildMeta;
let scratch: string | undefined;

beforeAll(async () => {
  process.chdir(ROOT);
  // dist/'s metafiles when they match the sources; otherwise a build of its own elsewhere, so
  // that a running `npm start` or test run keeps its dist/.
  const current = await upToDateBuild();
  if (current) {
    meta = current;
  } else {
    scratch = await mkdtemp(join(tmpdir(), 'bundle-guard-'));
    meta = await buildFunctions(join(scratch, 'functions'));
  }
}, 120_000);

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const bundles = () => FUNCTION_NAMES.map((name) => ({ name, metafile: meta.metafiles[name] }));
/** The files esbuild loaded for a bundle (a stand-in is loaded when its resolve hook matched). */
const loadedBy = (name: string) => Object.keys(meta.metafiles[name]?.inputs ?? {});
/** The files with code in a bundle, and how much. */
const inBundle = (name: string) =>
  Object.values(meta.metafiles[name]?.outputs ?? {})
    .flatMap((output) => Object.entries(output.inputs))
    .filter(([, input]) => input.bytesInOutput > 0);

describe('the Lambda bundles (esbuild metafile)', () => {
  test('every function was bundled', () => {
    expect(Object.keys(meta.metafiles).sort()).toEqual([...FUNCTION_NAMES].sort());
  });

  test('every stand-in in scripts/lambda-shims/ is in every bundle (its resolve hook matched)', async () => {
    const shims = (await readdir(SHIM_DIRECTORY)).map((file) => join(SHIM_DIRECTORY, file));
    expect(shims.length).toBeGreaterThan(0);
    const missing = bundles().flatMap(({ name }) =>
      shims.filter((shim) => !loadedBy(name).includes(shim)).map((shim) => `${name}: ${shim}`),
    );
    expect(missing).toEqual([]);
    // Each stand-in named in the build is one of those files.
    expect(meta.shims.map((shim) => relative(ROOT, shim.shim)).sort()).toEqual([...shims].sort());
  });

  test("no file of a replaced package is in any bundle (each stand-in's keepsOut)", () => {
    const unresolved = Object.entries(meta.keptOutEntries).filter(([, entry]) => entry === null);
    expect(unresolved.map(([module]) => `${module} no longer resolves: update keepsOut in scripts/build.ts`)).toEqual([]);
    const keptOut = Object.entries(meta.keptOutEntries).map(([module, entry]) => ({ module, directory: `${dirname(entry ?? '')}/` }));
    const leaks = bundles().flatMap(({ name }) =>
      keptOut.flatMap(({ module, directory }) => {
        const files = inBundle(name).filter(([path]) => path.startsWith(directory));
        const bytes = files.reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
        return files.length === 0 ? [] : [`${name}: ${files.length} files of ${module} (${bytes} bytes)`];
      }),
    );
    expect(leaks).toEqual([]);
  });

  test(`no bundle is over ${BUNDLE_GUARD_BYTES.toLocaleString('en')} bytes (a guard against accidents: size is a benchmark figure)`, () => {
    const sizes = bundles().map(({ name, metafile }) => {
      const output = Object.entries(metafile?.outputs ?? {}).find(([path]) => path.endsWith(`${name}/index.mjs`));
      return { name, bytes: output?.[1].bytes ?? Number.NaN };
    });
    expect(sizes.filter(({ bytes }) => !(bytes <= BUNDLE_GUARD_BYTES))).toEqual([]);
  });

  test('Powertools Metrics stays out of the bundles that publish no metrics (its construction is marked pure)', () => {
    const metricsBytes = (name: string) =>
      inBundle(name)
        .filter(([path]) => path.includes('@aws-lambda-powertools/metrics/'))
        .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
    expect(['authorizer', 'webhook-change-consumer', 'webhook-delivery'].map((name) => [name, metricsBytes(name)])).toEqual([
      ['authorizer', 0],
      ['webhook-change-consumer', 0],
      ['webhook-delivery', 0],
    ]);
    expect(metricsBytes('get-special-event')).toBeGreaterThan(0);
  });

  test("the credential stand-in answers with the role's credentials that Lambda puts in the environment", async () => {
    // Lambda sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN from the execution
    // role (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime);
    // the SDK's full chain tries the environment first, so on Lambda both give the same answer.
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret-example',
      AWS_SESSION_TOKEN: 'token-example',
    });
    try {
      await expect(defaultProvider()()).resolves.toMatchObject({
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'secret-example',
        sessionToken: 'token-example',
      });
    } finally {
      process.env = saved;
    }
  });
});
