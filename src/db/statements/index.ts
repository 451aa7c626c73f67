// Every SQL statement the services run against the models, in one registry
// (one module per domain). test/db/statements.test.ts describes each on the
// migrated database and checks it against the Prisma models it claims to
// return. The migration runner's statements on Prisma's own bookkeeping table
// (src/db/migrate.ts) are not here: no model describes that table.
import type { AnyStatement } from '../sql';
import * as addressBook from './address-book';
import * as auth from './auth';
import * as dialogs from './dialogs';
import * as live from './live';
import * as chat from './chat';
import * as phones from './phones';
import * as sessions from './sessions';
import * as sweeper from './sweeper';
import * as users from './users';

export { addressBook, auth, dialogs, live, chat, phones, sessions, sweeper, users };

const isStatement = (value: unknown): value is AnyStatement =>
  typeof value === 'object' && value !== null && 'name' in value && 'text' in value && 'params' in value;

/** All of them, for the checks. */
export const STATEMENTS: AnyStatement[] = [addressBook, auth, dialogs, live, chat, phones, sessions, sweeper, users].flatMap((module) =>
  Object.values(module).filter(isStatement),
);
