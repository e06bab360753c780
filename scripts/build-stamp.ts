// What decides whether `npm run build` has anything to do: a hash of everything the bundles are
// made from, stored with the last build's metafiles (dist/functions.meta.json).
import type { BuildOptions, Metafile } from 'esbuild';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LambdaShim } from './build.ts';

export const BUILD_DIRECTORY = 'dist';

export interface BuildMeta {
  /** inputsHash() when the bundles were built. */
  inputsHash: string;
  builtAt: string;
  shims: LambdaShim[];
  /** Where each shim's keepsOut module resolved when the bundles were built (null: it did not). */
  keptOutEntries: Record<string, string | null>;
  /** esbuild's metafile of each function's bundle, by function name. */
  metafiles: Record<string, Metafile>;
}

/** The inputs named outright; a bundle's other local inputs are taken from its metafile. */
const INPUT_DIRECTORIES = ['functions', 'scripts/lambda-shims'];
const INPUT_FILES = ['scripts/build.ts', 'scripts/build-stamp.ts', 'package-lock.json'];

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** Hash of the esbuild options, the named inputs and every file outside node_modules that the given bundles were made from. */
export async function inputsHash(options: BuildOptions, metafiles: Record<string, Metafile>): Promise<string> {
  const local = Object.values(metafiles).flatMap((metafile) =>
    Object.keys(metafile.inputs).filter((path) => !/(^|[\\/])node_modules[\\/]/.test(path)),
  );
  const named = (await Promise.all(INPUT_DIRECTORIES.map(filesUnder))).flat();
  const files = [...new Set([...INPUT_FILES, ...named, ...local])].sort();
  const hash = createHash('sha256').update(JSON.stringify(options));
  for (const file of files) {
    hash.update(`\0${file}\0`);
    hash.update(await readFile(file).catch(() => 'missing'));
  }
  return hash.digest('hex');
}

export async function readBuildMeta(file: string): Promise<BuildMeta | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as BuildMeta;
  } catch {
    return undefined;
  }
}
