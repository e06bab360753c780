// Runs every pattern against every sample in each regex engine this machine has, with JSON
// Schema's meaning (an unanchored search): ECMA-262 with and without `u` (Node), RE2 (re2-wasm),
// Python's `re` and Java's java.util.regex (child processes). Rust's regex crate is not here:
// crates.io is unreachable, so it cannot be built offline (RE2's syntax is its closest kin).
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One row per pattern: a string of 0/1 per sample, or `E <message>` when the engine refuses the pattern. */
export type Matrix = string[];

const here = dirname(fileURLToPath(import.meta.url));

function ecmaMatrix(patterns: readonly string[], samples: readonly string[], flags: string): Matrix {
  return patterns.map((source) => {
    try {
      const pattern = new RegExp(source, flags);
      return samples.map((sample) => (pattern.test(sample) ? '1' : '0')).join('');
    } catch (error) {
      return `E ${(error as Error).message}`;
    }
  });
}

function re2Matrix(patterns: readonly string[], samples: readonly string[]): Matrix {
  // re2-wasm is CommonJS; it requires the `u` flag (RE2 works on code points).
  const { RE2 } = createRequire(import.meta.url)('re2-wasm') as {
    RE2: new (source: string, flags: string) => { test(text: string): boolean };
  };
  return patterns.map((source) => {
    try {
      const pattern = new RE2(source, 'u');
      return samples.map((sample) => (pattern.test(sample) ? '1' : '0')).join('');
    } catch (error) {
      return `E ${(error as Error).message}`;
    }
  });
}

function pythonMatrix(patterns: readonly string[], samples: readonly string[]): Matrix {
  const output = execFileSync('python3', [join(here, 'pattern_matrix.py')], {
    input: JSON.stringify({ patterns, samples }),
    encoding: 'utf8',
  });
  return output.trimEnd().split('\n');
}

function javaMatrix(patterns: readonly string[], samples: readonly string[]): Matrix {
  const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');
  const input = [...patterns.map((p) => `P ${hex(p)}`), ...samples.map((s) => `S ${hex(s)}`)].join('\n');
  const output = execFileSync('java', [join(here, 'PatternMatrix.java')], { input, encoding: 'utf8', timeout: 120_000 });
  return output.trimEnd().split('\n');
}

type Engine = (patterns: readonly string[], samples: readonly string[]) => Matrix;

/** Whether `command` runs here (Java comes with DynamoDB Local's requirements, Python with most systems). */
const runs = (command: string, flag: string) => spawnSync(command, [flag], { stdio: 'ignore' }).status === 0;

/** Every engine this machine has, by name. */
export const ENGINES: Record<string, Engine> = {
  'ECMA-262 (u)': (p, s) => ecmaMatrix(p, s, 'u'),
  'ECMA-262 (no u)': (p, s) => ecmaMatrix(p, s, ''),
  RE2: re2Matrix,
  ...(runs('python3', '--version') ? { 'Python re': pythonMatrix } : {}),
  ...(runs('java', '-version') ? { 'Java regex': javaMatrix } : {}),
};
