// A write that breaks a unique key or references an application that is not
// there is refused with the service's own message, whichever client ran it:
// provisioning's users.create goes through Prisma (P2002/P2003), the services'
// users.createMany through a pg statement (SQLSTATE 23505/23503); src/db's
// constraintViolation reads both.
// Nothing is stored by a refused write.
// Then the connection that answered stays in the pool: pg-pool's own query(),
// which Prisma's adapter uses, ended it, and on the embedded database (one
// connection slot, freed a moment after a client leaves) the next statement
// failed with "Connection terminated unexpectedly".
import { randomBytes } from 'node:crypto';
import type { Database } from '../../src/db';
import type { Provisioning } from '../../src/provisioning';
import { prismaOf } from '../../src/provisioning/client';
import type { Services } from '../../src/services';
import { hashPassword } from '../../src/services/secrets';
import { servicesOver } from '../support/seed';
import { openTestDatabase } from '../support/service';

let db: Database;
let services: Services;
let provisioning: Provisioning;
let applicationId: number;
const passwordHash = hashPassword('password123');
const login = `taken-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  db = await openTestDatabase();
  ({ services, provisioning } = servicesOver(db));
  ({
    application: { id: applicationId },
  } = await provisioning.applications.create(`violations ${randomBytes(4).toString('hex')}`));
  await provisioning.users.create({ applicationId, login, password: 'password123' });
});
afterAll(async () => {
  await services?.close();
  await db?.close();
});

const usersOf = (id: number) => prismaOf(db).user.count({ where: { applicationId: id } });

test.each([
  ['users.create (Prisma)', () => provisioning.users.create({ applicationId, login, password: 'password123' })],
  [
    'users.createMany (pg)',
    () =>
      services.users.createMany(applicationId, [
        { login: `${login}-new`, passwordHash },
        { login, passwordHash },
      ]),
  ],
])('%s: a login already taken is a bad input that stores nothing, and the connection that answered stays open', async (_client, write) => {
  const connections = db.pool.totalCount;
  await expect(write()).rejects.toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/already taken in this application/) });
  expect(db.pool.totalCount).toBe(connections);
  expect(await usersOf(applicationId)).toBe(1);
});

test.each([
  ['users.create (Prisma)', () => provisioning.users.create({ applicationId: 2_000_000_000, login: 'orphan', password: 'password123' })],
  ['users.createMany (pg)', () => services.users.createMany(2_000_000_000, [{ login: 'orphan', passwordHash }])],
])('%s: an application that does not exist is a bad input that stores nothing', async (_client, write) => {
  await expect(write()).rejects.toMatchObject({ code: 'BAD_USER_INPUT', message: expect.stringMatching(/application 2000000000 does not exist/) });
  expect(await usersOf(2_000_000_000)).toBe(0);
});
