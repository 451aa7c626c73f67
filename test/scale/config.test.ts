// The scaling settings: validated at start, with a message naming the variable,
// and turned into the app's options.
import { appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/errors';

const server = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' };

test('defaults: named statements, no replicas, no Redis, fail open', () => {
  const config = loadConfig({});
  expect(config).toMatchObject({
    DB_PREPARED_STATEMENTS: 'named',
    READ_REPLICA_MAX_LAG_MS: 5_000,
    READ_YOUR_WRITES_WAIT_MS: 250,
    REDIS_KEY_PREFIX: 'chat-user-service:',
    REDIS_CONNECT_TIMEOUT_MS: 30_000,
    RATE_LIMIT_ON_STORE_ERROR: 'open',
  });
  expect(config.DATABASE_READ_URL).toBeUndefined();
  expect(config.REDIS_URL).toBeUndefined();
  // One embedded database has no other instance to tell about revocations.
  expect(appOptionsFromConfig(config).revocation).toBe(false);
  expect(appOptionsFromConfig(loadConfig(server)).revocation).toBe(true);
});

test('DATABASE_READ_URL takes several replicas, and needs DATABASE_URL', () => {
  const config = loadConfig({ ...server, DATABASE_READ_URL: 'postgres://a:5433/db, postgresql://b:5434/db' });
  expect(config.DATABASE_READ_URL).toEqual(['postgres://a:5433/db', 'postgresql://b:5434/db']);
  expect(() => loadConfig({ DATABASE_READ_URL: 'postgres://a:5433/db' })).toThrow(/DATABASE_READ_URL: needs DATABASE_URL/);
  expect(() => loadConfig({ ...server, DATABASE_READ_URL: 'mysql://a/db' })).toThrow(/DATABASE_READ_URL: must be one or more/);
});

test.each([
  ['DB_PREPARED_STATEMENTS', 'sometimes'],
  ['REDIS_URL', 'http://127.0.0.1:6379'],
  ['RATE_LIMIT_ON_STORE_ERROR', 'maybe'],
  ['READ_REPLICA_MAX_LAG_MS', '-1'],
  ['REDIS_CONNECT_TIMEOUT_MS', '10'],
])('%s=%s is refused, naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
});

test('RATE_LIMIT_ON_STORE_ERROR reaches the rate limiter', () => {
  const options = appOptionsFromConfig(loadConfig({ RATE_LIMIT_ON_STORE_ERROR: 'closed' }));
  expect(options.rateLimit && options.rateLimit.onStoreError).toBe('closed');
});
