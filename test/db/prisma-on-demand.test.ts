// Prisma's client is provisioning's alone (src/provisioning): a service that
// answers requests — lookups, address books, GraphQL — never loads it, and
// the first provisioning write does. Run in a process of its own on the
// compiled service (dist/, as `npm start` runs it), whose require cache says
// what was loaded; on an in-memory embedded database, whichever the run uses.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const DIST = path.resolve(__dirname, '../../dist');

const PROCESS = `
const path = require('node:path');
const dist = ${JSON.stringify(DIST)};
const { openDatabase } = require(path.join(dist, 'db'));
const { createApp } = require(path.join(dist, 'app'));
const { hashPassword, hashSecret, newSecret } = require(path.join(dist, 'services', 'secrets'));
const prismaModules = () => Object.keys(require.cache).filter((file) => /[\\\\/](__generated__[\\\\/]prisma|@prisma)[\\\\/]/.test(file)).length;
(async () => {
  const database = await openDatabase({ dataDir: null });
  const app = await createApp({ database, rateLimit: false, logger: false });
  // A tenant written without provisioning: the application by hand, its users by the services' bulk import.
  const apiKey = newSecret();
  const { rows: [{ id }] } = await database.pool.query('INSERT INTO applications (name, api_key_hash) VALUES ($1, $2) RETURNING id', ['on demand', hashSecret(apiKey)]);
  const passwordHash = hashPassword('password123');
  await app.services.users.createMany(id, [1, 2].map((n) => ({ login: 'u' + n, passwordHash, phone: '+1555000000' + n, externalUserId: n })));
  const asUser = { authorization: 'ApiKey ' + apiKey, 'on-behalf-of': '1', 'content-type': 'application/json' };
  const statuses = [];
  for (const request of [
    { method: 'GET', url: '/users/external/2.json', headers: asUser },
    { method: 'POST', url: '/address_book.json', headers: asUser, payload: JSON.stringify({ contacts: [{ name: 'Two', phone: '+15550000002' }] }) },
    { method: 'GET', url: '/address_book/registered_users.json', headers: asUser },
    { method: 'POST', url: '/graphql', headers: asUser, payload: JSON.stringify({ query: '{ registeredUsers { id fullName } }' }) },
  ]) statuses.push((await app.fastify.inject(request)).statusCode);
  const answering = prismaModules();
  await app.provisioning.users.create({ applicationId: id, login: 'u3', password: 'password123' });
  process.stdout.write(JSON.stringify({ statuses, answering, provisioned: prismaModules() }));
  await app.close();
  await database.close();
})();
`;

test('requests leave Prisma unloaded; the first provisioning write loads it', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', PROCESS], { timeout: 50_000 });
  const result = JSON.parse(stdout) as { statuses: number[]; answering: number; provisioned: number };
  expect(result.statuses).toEqual([200, 200, 200, 200]);
  expect(result.answering).toBe(0);
  expect(result.provisioned).toBeGreaterThan(0);
});
