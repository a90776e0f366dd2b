// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'data/',
      'coverage/',
      'test-results/',
      'bench/results/',
      'soak/results/',
      'web/dist/',
      'dist/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      // Fastify plugins are async functions by contract, whether or not they await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // JSX event handlers are one-line arrows around a state setter: `onClick={() => setOpen(true)}`.
    files: ['web/src/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  {
    files: ['**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
