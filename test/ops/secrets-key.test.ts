// SECRETS_KEY: the key that seals applications' auth secrets. Required in
// production; elsewhere generated once into a file next to the embedded
// database and read back on every later start, so auth secrets survive restarts.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig, resolveSecretsKey } from '../../src/config';
import { ConfigError } from '../../src/errors';
import { openSecret, sealSecret } from '../../src/services/secrets';

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'secrets-key-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

test('outside production an unset key is generated once next to the embedded database (mode 600) and reused', () => {
  const dir = scratch();
  const config = loadConfig({ PGLITE_DIR: path.join(dir, 'pglite') });
  const first = resolveSecretsKey(config);
  expect(first).toMatchObject({ file: path.join(dir, 'secrets.key'), generated: true });
  expect(first.key).toHaveLength(32);
  expect(statSync(first.file!).mode & 0o777).toBe(0o600);
  const second = resolveSecretsKey(config);
  expect(second.generated).toBe(false);
  expect(second.key.equals(first.key)).toBe(true);
  // What one start sealed, the next opens.
  expect(openSecret(sealSecret('the auth secret', first.key), second.key)).toBe('the auth secret');
});

test('production refuses to start without SECRETS_KEY or SECRETS_KEY_FILE, naming the variable', () => {
  const config = loadConfig({ NODE_ENV: 'production', PGLITE_DIR: path.join(scratch(), 'pglite') });
  expect(() => resolveSecretsKey(config)).toThrow(ConfigError);
  expect(() => resolveSecretsKey(config)).toThrow(/^Invalid configuration:\n {2}SECRETS_KEY: required in production/);
});

test('production takes the key from SECRETS_KEY or from an existing SECRETS_KEY_FILE, and never generates one', () => {
  const hex = 'ab'.repeat(32);
  expect(resolveSecretsKey(loadConfig({ NODE_ENV: 'production', SECRETS_KEY: hex })).key.toString('hex')).toBe(hex);
  const file = path.join(scratch(), 'key');
  expect(() => resolveSecretsKey(loadConfig({ NODE_ENV: 'production', SECRETS_KEY_FILE: file }))).toThrow(/SECRETS_KEY_FILE: .* does not exist/);
  writeFileSync(file, Buffer.alloc(32, 7).toString('base64'));
  expect(resolveSecretsKey(loadConfig({ NODE_ENV: 'production', SECRETS_KEY_FILE: file })).key.equals(Buffer.alloc(32, 7))).toBe(true);
});

test.each(['short', 'zz'.repeat(32), Buffer.alloc(31).toString('base64')])('SECRETS_KEY=%p is not 32 bytes: the configuration names it', (value) => {
  expect(() => loadConfig({ SECRETS_KEY: value })).toThrow(/^Invalid configuration:\n {2}SECRETS_KEY: must be 32 bytes/);
});

test('a key file that does not hold 32 bytes stops the start naming the file', () => {
  const file = path.join(scratch(), 'key');
  writeFileSync(file, 'not a key');
  expect(() => resolveSecretsKey(loadConfig({ SECRETS_KEY_FILE: file }))).toThrow(/SECRETS_KEY_FILE: .*key must hold 32 bytes/);
});

test('a secret sealed under one key cannot be opened under another', () => {
  const sealed = sealSecret('s', Buffer.alloc(32, 1));
  expect(() => openSecret(sealed, Buffer.alloc(32, 2))).toThrow(/sealed under another key/);
});

test('TLS_CERT_FILE and TLS_KEY_FILE go together and must exist', () => {
  const file = path.join(scratch(), 'cert.pem');
  writeFileSync(file, 'x');
  expect(() => loadConfig({ TLS_CERT_FILE: file })).toThrow(/TLS_CERT_FILE, TLS_KEY_FILE: set both/);
  expect(() => loadConfig({ TLS_CERT_FILE: file, TLS_KEY_FILE: `${file}.missing` })).toThrow(/TLS_KEY_FILE: .* does not exist/);
  expect(loadConfig({ TLS_CERT_FILE: file, TLS_KEY_FILE: file }).TLS_CERT_FILE).toBe(file);
});
