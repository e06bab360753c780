// Whether `npm start` must rebuild the bundles: a SHA-256 of everything the bundles are made from
// (the handler sources, the build script and its shims, the locked dependency versions, the
// compiler settings) is written next to the bundles after a build; a start whose inputs hash to
// the same value skips the build (about 10 s on a busy laptop), any change rebuilds.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Files and directories (read recursively) the bundles depend on, relative to the project. */
export const BUNDLE_INPUTS = ['functions', 'scripts/build.ts', 'scripts/lambda-shims', 'package-lock.json', 'tsconfig.json'];
const STAMP_FILE = '.inputs-sha256';

async function files(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return existsSync(path) ? [path] : [];
  const nested = await Promise.all(entries.map((entry) => (entry.isDirectory() ? files(join(path, entry.name)) : [join(path, entry.name)])));
  return nested.flat();
}

/** The hash of the bundles' inputs under `root`: names and contents, in a fixed order. */
export async function bundleInputsHash(root = process.cwd()): Promise<string> {
  const paths = (await Promise.all(BUNDLE_INPUTS.map((input) => files(join(root, input))))).flat().sort();
  const hash = createHash('sha256');
  for (const path of paths) {
    hash.update(`${relative(root, path)}\0`);
    hash.update(await readFile(path));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** True when every bundle exists and the stamp beside them records `inputsHash`. */
export async function bundlesUpToDate(outdir: string, bundleNames: readonly string[], inputsHash: string): Promise<boolean> {
  const stamp = await readFile(join(outdir, STAMP_FILE), 'utf8').catch(() => '');
  return stamp.trim() === inputsHash && bundleNames.every((name) => existsSync(join(outdir, name, 'index.mjs')));
}

/** Records that the bundles in `outdir` were built from inputs hashing to `inputsHash`. */
export async function writeBundleStamp(outdir: string, inputsHash: string): Promise<void> {
  await writeFile(join(outdir, STAMP_FILE), `${inputsHash}\n`);
}
