// `npm start -- --watch`: when a function's sources change, its bundle is rebuilt (only the
// functions whose bundle was made from a changed file) and its execution environments are
// retired, so its next invocation runs the new code; the port, the data and the other functions'
// warm environments stay. As Lambda after a code update: invocations under way finish on the old
// code, new ones start a new environment. Node's recursive fs.watch (inotify on Linux) sees the
// edits; a short quiet period gathers an editor's several writes into one rebuild.
import { watch, type FSWatcher } from 'node:fs';
import { relative, resolve } from 'node:path';
import { FUNCTION_NAMES, localInputs, metaFileOf, rebuildFunction } from './build.ts';
import { readBuildMeta } from './build-stamp.ts';

/** The directories whose files the bundles are made from (scripts/build-stamp.ts names the same). */
const SOURCE_DIRECTORIES = ['functions', 'scripts/lambda-shims'];
/** How long the sources must be quiet before a rebuild: an editor's save is often several writes. */
const QUIET_MS = 200;

export interface SourceWatchOptions {
  bundlesDirectory: string;
  /** Called after a function's bundle was rebuilt, before its next invocation. */
  retire: (functionName: string) => void;
  say: (line: string) => void;
}

/** Starts watching; returns what stops it. */
export async function watchSources({ bundlesDirectory, retire, say }: SourceWatchOptions): Promise<() => void> {
  const meta = await readBuildMeta(metaFileOf(bundlesDirectory));
  /** Each function's local inputs, as absolute paths (a function without a known build is rebuilt on any change). */
  const inputs = new Map<string, Set<string> | undefined>(
    FUNCTION_NAMES.map((name) => [name, meta?.metafiles[name] ? absolute(localInputs(meta.metafiles[name])) : undefined]),
  );
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let rebuilding: Promise<void> = Promise.resolve();

  const rebuild = async () => {
    const files = [...changed];
    changed.clear();
    const affected = FUNCTION_NAMES.filter((name) => {
      const used = inputs.get(name);
      return used === undefined || files.some((file) => used.has(file));
    });
    for (const name of affected) {
      const started = performance.now();
      try {
        inputs.set(name, absolute(await rebuildFunction(name, bundlesDirectory)));
      } catch (error) {
        // esbuild has printed the error with its file and line; the old bundle keeps answering.
        say(`watch: ${name} not rebuilt (${(error as Error).message.split('\n')[0]}); it keeps running the last good build`);
        continue;
      }
      retire(name);
      say(`watch: rebuilt ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s; its next invocation runs the new code`);
    }
  };

  const watchers: FSWatcher[] = SOURCE_DIRECTORIES.map((directory) =>
    watch(directory, { recursive: true }, (_event, file) => {
      if (file === null) return;
      changed.add(resolve(directory, file));
      clearTimeout(timer);
      timer = setTimeout(() => {
        rebuilding = rebuilding.then(rebuild);
      }, QUIET_MS);
    }),
  );
  say(
    `watch: rebuilding a function's bundle when ${SOURCE_DIRECTORIES.map((d) => `${relative(process.cwd(), resolve(d))}/`).join(' or ')} changes`,
  );
  return () => {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}

function absolute(paths: readonly string[]): Set<string> {
  return new Set(paths.map((path) => resolve(path)));
}
