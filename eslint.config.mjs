// ESLint (npm run lint, CI): eslint's recommended rules and typescript-eslint's
// type-checked ones over src, test, bench, scripts and examples. Formatting is
// Prettier's (.prettierrc.json); none of these rules is about layout.
import eslint from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['**/__generated__/', 'dist/', 'node_modules/', 'artifacts/', 'coverage/', '.data/', '.tools/']),
  eslint.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // Each file is checked with the tsconfig.json nearest to it (root, bench/, examples/).
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    // Build and CI scripts and tool configs in plain JavaScript, run by Node: no
    // tsconfig covers them and they have no types, so the type-checked rules
    // would only report `any`.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
