// @ts-check
// The same suites run on the embedded database (default: each test file gets
// its own in-memory PGlite) and on a PostgreSQL server when TEST_DATABASE_URL
// is set (global-setup.ts then creates a fresh database for the run).
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs', ignoreDynamic: true } }],
    // cookie 2 (light-my-request's, behind fastify.inject) is ES modules only:
    // Node requires it natively, jest's module loader does not.
    '/node_modules/cookie/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!cookie/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60_000,
  maxWorkers: 2,
};
