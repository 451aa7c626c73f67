// ESLint (npm run lint, CI): ESLint's recommended rules and typescript-eslint's
// strict type-checked ones over src, test, bench, scripts and examples.
// Layout is Prettier's (.prettierrc.json): none of these rules is about it.
// A rule turned off or loosened here says why; a single exception in the code
// is an eslint-disable-next-line comment with its reason.
import eslint from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // Generated code (rewritten by its generators), builds and run output.
  globalIgnores(['**/__generated__/', 'dist/', 'node_modules/', 'artifacts/', 'coverage/', '.data/', '.tools/']),
  eslint.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // Each file is checked with the tsconfig.json nearest to it (the root's, bench/'s, examples/').
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Numbers and booleans print as expected in a template, and so do null
      // and undefined: with noUncheckedIndexedAccess a `split(...)[0]` or a
      // match group is `string | undefined`, and a message that shows
      // "undefined" is what the code wants. Objects, arrays and `any` still
      // have to be converted on purpose.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowAny: false, allowNullish: true, allowRegExp: false, allowNever: false, allowArray: false },
      ],
      // `_` names what is left unused on purpose: a rest sibling that drops a
      // key, a callback's parameter kept for its position.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Off: with noUncheckedIndexedAccess (tsconfig.json) every indexed read
      // is `T | undefined`, and `!` is how the code says "bounded just above"
      // (a row the query returned, a match group, a test's seeded user); a
      // check in its place would throw the same TypeError, without the type.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Off: a style rule. `return done()` in a callback returns nothing
      // either way, and its fix would rewrite working code for looks.
      '@typescript-eslint/no-confusing-void-expression': 'off',
      // Off: `async` without `await` is how the code implements an interface
      // that returns a promise (Apollo plugin hooks, loaders, resolvers): a
      // throw becomes a rejection, which is what those callers handle.
      '@typescript-eslint/require-await': 'off',
      // Off: the service is CommonJS, and a `require` inside a function
      // (typed `as typeof import(...)`) loads a module only on the path that
      // needs it: tracing, ioredis in the CLI, instrumented packages.
      '@typescript-eslint/no-require-imports': 'off',
      // Off: graphql-js's string enums (OperationTypeNode, Kind) are compared
      // with their documented literals ('query', 'mutation'), as its own code
      // and every GraphQL server does.
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
      // Off: the objects deleted from are maps keyed by name (response
      // headers, a test's request fields): removing a key is the point.
      '@typescript-eslint/no-dynamic-delete': 'off',
    },
  },
  {
    // Tests read untyped JSON (HTTP bodies, GraphQL results, log lines) and
    // assert on it: the assertions are the check, so the `any` rules would
    // only ask for casts that check nothing. Everywhere else they apply.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowAny: true, allowNullish: true, allowRegExp: false, allowNever: false, allowArray: false },
      ],
      '@typescript-eslint/restrict-plus-operands': [
        'error',
        { allowAny: true, allowBoolean: false, allowNullish: false, allowNumberAndString: false, allowRegExp: false },
      ],
      // Off: tests check what the types say cannot happen (an answer's
      // optional chains, a defensive `??`): the service's output is what is
      // under test, not something to trust.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Off: fuzz and signature tests spread strings into code points on purpose.
      '@typescript-eslint/no-misused-spread': 'off',
    },
  },
  {
    // Build and CI scripts and tool configs in plain JavaScript, run by Node:
    // no tsconfig covers them and they have no types, so the type-checked
    // rules would only report `any`.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
