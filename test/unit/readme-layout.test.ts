// The README's "Layout" block names the repository's folders as they are: every folder of
// functions/, lib/ and test/ and every top-level folder has its line, every folder and file a line
// names exists, and every stand-in of lib/local/ (`*-stand-in.ts`) is named. A folder added,
// renamed or removed fails here until the README says so.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, subfolders } from './import-graph.ts';

interface Entry {
  /** The path the line names (`functions/`, `functions/http/`, `lib/local/`, `.ci/run`). */
  path: string;
  /** Its description, continuation lines included. */
  text: string;
}

/** The Layout block's lines: a path at column 0, or two spaces in for a folder of the last one. */
function layoutEntries(): Entry[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /## Layout\n\n```\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block) throw new Error('README.md has no Layout block');
  const entries: Entry[] = [];
  let parent = '';
  for (const line of block.split('\n').filter(Boolean)) {
    const entry = /^( {0,2})(\S+)\s+(.*)$/.exec(line);
    const last = entries.at(-1);
    if (!entry) {
      if (!last) throw new Error(`README.md's Layout starts with a continuation line: ${line}`);
      last.text += ` ${line.trim()}`;
      continue;
    }
    const [, indent, name, text] = entry as unknown as [string, string, string, string];
    const path = indent ? `${parent}${name}` : name;
    if (!indent) parent = name;
    entries.push({ path, text });
  }
  return entries;
}

const entries = layoutEntries();
const paths = entries.map((entry) => entry.path);
const textOf = (path: string) => entries.find((entry) => entry.path === path)?.text ?? '';
/** The folders (`unit/`) and files (`routes.ts`) a description names. */
const named = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((match) => match[1] as string);

test('every path the layout names exists', () => {
  expect(paths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
});

test('every folder of functions/ has its line, and every line under functions/ a folder', () => {
  expect(paths.filter((path) => path.startsWith('functions/') && path !== 'functions/').sort()).toEqual(
    subfolders('functions').map((folder) => `${folder}/`),
  );
});

test('every folder of lib/ has its line', () => {
  expect(paths.filter((path) => path.startsWith('lib/')).sort()).toEqual(subfolders('lib').map((folder) => `${folder}/`));
});

test('every tracked top-level folder has a line (or its folders have)', () => {
  const ignored = readFileSync(join(ROOT, '.gitignore'), 'utf8')
    .split('\n')
    .filter((line) => line.endsWith('/'));
  const folders = readdirSync(ROOT, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && !ignored.includes(`${entry.name}/`))
    .map((entry) => `${entry.name}/`);
  expect(folders.filter((folder) => !paths.some((path) => path.startsWith(folder)))).toEqual([]);
});

test('the test/ line names every folder of test/, and only those', () => {
  const folders = subfolders('test').map((folder) => `${folder.slice('test/'.length)}/`);
  expect(named(textOf('test/'), /(?:^|[\s(:;,])([a-z0-9-]+\/)/g).sort()).toEqual(folders.sort());
});

test('every file a line names is in its folder, and every stand-in of lib/local/ is named', () => {
  const missing = entries.flatMap(({ path, text }) =>
    named(text, /([\w-]+\.(?:ts|sh))\b/g)
      .map((file) => join(path, file))
      .filter((file) => !existsSync(join(ROOT, file))),
  );
  expect(missing).toEqual([]);
  const standIns = readdirSync(join(ROOT, 'lib/local')).filter((file) => file.endsWith('-stand-in.ts'));
  expect(standIns.length).toBeGreaterThan(0);
  expect(standIns.filter((file) => !textOf('lib/local/').includes(file))).toEqual([]);
});
