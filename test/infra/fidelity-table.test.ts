// docs/FIDELITY.md is the local run's whole promise, and each row names the test that shows it.
// Here each cited test file exists, and each quoted title (the part before an ellipsis, `…`) is
// in the file cited before it. Whether a test exercises its row is for review; that it exists is
// checked on every run.
import { readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fidelity = readFileSync(`${root}/docs/FIDELITY.md`, 'utf8');

/** Every test file of the repository, by path from the root. */
const testFiles = (readdirSync(`${root}/test`, { recursive: true }) as string[])
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => `test/${file}`);

/** A cited name (`test/e2e/auth.test.ts`, or `auth.test.ts` alone when only one file has that name) as a path. */
function resolveTest(name: string): string | undefined {
  const matches = testFiles.filter((file) => file === name || file.endsWith(`/${name}`));
  return matches.length === 1 ? matches[0] : undefined;
}

interface Row {
  section: string;
  behaviour: string;
  tests: string;
}

/** The rows of every table whose last column is "Test". */
function rows(): Row[] {
  const found: Row[] = [];
  let section = '';
  let testColumn = -1;
  for (const line of fidelity.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3);
    if (!line.startsWith('|')) {
      testColumn = -1;
      continue;
    }
    // Cells split at pipes outside code spans.
    const cells = line
      .replace(/`[^`]*`/g, (span) => span.replaceAll('|', '\u0000'))
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.replaceAll('\u0000', '|').trim());
    if (testColumn < 0) {
      testColumn = cells.indexOf('Test');
      continue;
    }
    if (/^-+$/.test(cells[0] ?? '')) continue;
    found.push({ section, behaviour: cells[0] ?? '', tests: cells[testColumn] ?? '' });
  }
  return found;
}

/** The test files and titles a Test cell cites: each "title" belongs to the file named before it. */
function citations(cell: string): { file: string; titles: string[] }[] {
  const cited: { file: string; titles: string[] }[] = [];
  for (const match of cell.matchAll(/`([^`]+\.test\.ts)`|"([^"]+)"/g)) {
    if (match[1]) cited.push({ file: match[1], titles: [] });
    else cited.at(-1)?.titles.push(match[2] as string);
  }
  return cited;
}

const tableRows = rows();

test('docs/FIDELITY.md has its tables', () => {
  expect(tableRows.length).toBeGreaterThan(30);
});

test.each(tableRows.map((row) => [`${row.section}: ${row.behaviour}`, row] as const))(
  'the row "%s" names test files that exist, with the titles it quotes',
  (_, row) => {
    const cited = citations(row.tests);
    expect([row.behaviour, cited.length > 0]).toEqual([row.behaviour, true]);
    for (const { file, titles } of cited) {
      const path = resolveTest(file);
      expect([file, path !== undefined]).toEqual([file, true]);
      const source = readFileSync(`${root}/${path}`, 'utf8');
      for (const title of titles) {
        const quoted = title.split('…')[0]?.trim() ?? '';
        expect([relative(root, `${root}/${path}`), quoted, source.includes(quoted)]).toEqual([
          relative(root, `${root}/${path}`),
          quoted,
          true,
        ]);
      }
    }
  },
);
