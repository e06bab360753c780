// `npm run lint`: typescript-eslint's strictTypeChecked and stylisticTypeChecked rule sets, which
// read the types from tsconfig.json (the same program `tsc --noEmit` checks). See README, "Lint".
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'cdk.out/', 'coverage/', 'bench-results/', '.data/'] },
  eslint.configs.recommended,
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    rules: {
      // Numbers and booleans in messages and keys are intended (`${count} dates`); strict forbids them.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // Contradicts strict's no-non-null-assertion (it asks for `x!` where that rule forbids it); strict wins.
      '@typescript-eslint/non-nullable-type-assertion-style': 'off',
      // `() => void send()` style shorthands are clear; the rule still flags void values used as data.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // `const { omitted: _omitted, ...rest } = value` is how this code drops a property.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, varsIgnorePattern: '^_', argsIgnorePattern: '^_' }],
      // `async` without `await` is kept where a Promise-returning signature is implemented (cleanups, handlers, test doubles): it turns a throw into a rejection, which dropping it would change.
      '@typescript-eslint/require-await': 'off',
      // `process.env.X || default` treats an empty variable as unset on purpose; `??` would not.
      '@typescript-eslint/prefer-nullish-coalescing': ['error', { ignorePrimitives: { string: true } }],
    },
  },
  {
    // Product code (issue 42, "One job per module"): at most 350 lines a file, 80 a function (its blank lines and comments not counted).
    files: ['functions/**/*.ts', 'lib/**/*.ts', 'bin/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 350 }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // A test's (or the benchmark harness's) `value!` throws and fails the run, which is what it wants.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // These tests walk untyped JSON documents (CloudFormation templates, the OpenAPI document).
    files: ['test/infra/**/*.ts', 'test/infra-engines/**/*.ts', 'test/contract/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  {
    // The configuration files are plain JavaScript outside tsconfig.json.
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
