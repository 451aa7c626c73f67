// Every statement of the registry (src/db/statements) against the migrated
// database and the Prisma models: each is described by PostgreSQL (parsed and
// planned, not run), its parameter types must be the declared ones, and its
// result columns the declared ones, in order, each model-field column of the
// field's type and, where PostgreSQL traces it to a table column, that very
// column of the model's table. A column renamed in schema.prisma (and its
// migration) without the SQL following fails here, naming the statement.
import type { Connection, PoolClient } from 'pg';
import type { Database } from '../../src/db';
import type { AnyStatement, Column } from '../../src/db/sql';
import { STATEMENTS } from '../../src/db/statements';
import { USER_COLUMNS, USER_FIELDS } from '../../src/db/statements/users';
import { prismaOf } from '../../src/provisioning/client';
import { openTestDatabase } from '../support/service';

let db: Database;
let client: PoolClient;
/** pg_type names by oid, and (table oid, attnum) → column name. */
let typeNames: Map<number, string>;
let columnNames: Map<string, string>;
let tableNames: Map<number, string>;

beforeAll(async () => {
  db = await openTestDatabase();
  client = await db.pool.connect();
  typeNames = new Map((await client.query<{ oid: number; typname: string }>('SELECT oid::int, typname FROM pg_type')).rows.map((r) => [r.oid, r.typname]));
  const columns = await client.query<{ attrelid: number; attnum: number; attname: string; relname: string }>(
    `SELECT a.attrelid::int, a.attnum, a.attname, c.relname
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped`,
  );
  columnNames = new Map(columns.rows.map((r) => [`${r.attrelid}:${r.attnum}`, r.attname]));
  tableNames = new Map(columns.rows.map((r) => [r.attrelid, r.relname]));
});
afterAll(async () => {
  client?.release();
  await db?.close();
});

interface Described {
  params: number[];
  fields: { name: string; tableID: number; columnID: number; dataTypeID: number }[];
}

/**
 * Parse + Describe on the extended protocol, through pg's documented
 * "submittable" query interface: PostgreSQL answers with the statement's
 * parameter and row descriptions without running it.
 */
function describeStatement(text: string): Promise<Described> {
  return new Promise((resolve, reject) => {
    const described: Described = { params: [], fields: [] };
    const submittable = {
      submit(connection: Connection & { once(event: 'parameterDescription', listener: (msg: { dataTypeIDs: number[] }) => void): void }) {
        connection.once('parameterDescription', (msg) => {
          described.params = msg.dataTypeIDs;
        });
        (connection.parse as (config: unknown) => void)({ text, types: [] });
        (connection.describe as (config: unknown) => void)({ type: 'S' });
        connection.sync();
      },
      handleRowDescription(msg: { fields: Described['fields'] }) {
        described.fields = msg.fields;
      },
      // On an error pg drops the query at once: ReadyForQuery will not reach it.
      handleError(error: Error) {
        reject(error);
      },
      handleReadyForQuery() {
        resolve(described);
      },
      handleDataRow() {},
      handleCommandComplete() {},
      handleEmptyQuery() {},
      handlePortalSuspended() {},
    };
    client.query(submittable as never);
  });
}

/** The PostgreSQL types a Prisma scalar type is stored as (schema.prisma's @db attributes included). */
const PRISMA_TYPES: Record<string, string[]> = {
  Int: ['int4'],
  String: ['text', 'varchar'],
  Boolean: ['bool'],
  DateTime: ['timestamptz'],
};

interface RuntimeModel {
  dbName: string | null;
  fields: { name: string; kind: string; type: string; dbName?: string | null }[];
}
const models = () => (prismaOf(db) as unknown as { _runtimeDataModel: { models: Record<string, RuntimeModel> } })._runtimeDataModel.models;

/** What is wrong with the statement, if anything: each line names it. */
async function problems(statement: AnyStatement): Promise<string[]> {
  const found: string[] = [];
  const say = (what: string) => found.push(`statement ${statement.name}: ${what}`);
  let described: Described;
  try {
    described = await describeStatement(statement.text);
  } catch (error) {
    return [`statement ${statement.name}: PostgreSQL refuses it: ${(error as Error).message}`];
  }
  const params = described.params.map((oid) => typeNames.get(oid));
  if (JSON.stringify(params) !== JSON.stringify(statement.params))
    say(`parameters are ${JSON.stringify(params)}, declared ${JSON.stringify(statement.params)}`);

  const declared = Object.entries<Column>(statement.columns);
  const names = described.fields.map((f) => f.name);
  if (JSON.stringify(names) !== JSON.stringify(declared.map(([name]) => name))) {
    say(`returns columns ${JSON.stringify(names)}, declared ${JSON.stringify(declared.map(([name]) => name))}`);
    return found;
  }
  described.fields.forEach((described, index) => {
    const [name, column] = declared[index]!;
    const type = typeNames.get(described.dataTypeID)!;
    if ('type' in column) {
      if (type !== column.type) say(`column ${name} is ${type}, declared ${column.type}`);
      return;
    }
    const model = models()[column.model];
    const field = model?.fields.find((f) => f.name === column.field && f.kind === 'scalar');
    if (!model || !field) {
      say(`column ${name} claims ${column.model}.${column.field}, which the Prisma schema does not have`);
      return;
    }
    if (!PRISMA_TYPES[field.type]?.includes(type)) say(`column ${name} is ${type}, but ${column.model}.${column.field} is a Prisma ${field.type}`);
    if (described.tableID !== 0) {
      const table = tableNames.get(described.tableID);
      const source = columnNames.get(`${described.tableID}:${described.columnID}`);
      const expected = { table: model.dbName ?? column.model, column: field.dbName ?? field.name };
      if (table !== expected.table || source !== expected.column) {
        say(`column ${name} comes from ${table}.${source}, but ${column.model}.${column.field} is ${expected.table}.${expected.column}`);
      }
    }
  });
  return found;
}

test('the registry holds every statement of the services, each under its own name', () => {
  const names = STATEMENTS.map((s) => s.name);
  expect(new Set(names).size).toBe(names.length);
  expect(names.length).toBeGreaterThanOrEqual(20);
});

test.each(STATEMENTS.map((s) => [s.name, s] as const))(
  '%s: its parameters and result columns are those declared, and its model columns the Prisma model’s',
  async (_name, statement) => {
    expect(await problems(statement)).toEqual([]);
  },
);

test('the user select list covers every scalar field of the User model but the password hash and the phone key, in its declared order', () => {
  // phoneKey is the matches' internal key (src/services/phones.ts): no answer returns it.
  const scalar = models()
    .User!.fields.filter((f) => f.kind === 'scalar' && f.name !== 'passwordHash' && f.name !== 'phoneKey')
    .map((f) => f.name);
  expect([...USER_FIELDS].sort()).toEqual([...scalar].sort());
  const aliases = [...USER_COLUMNS.matchAll(/(?:AS "(\w+)"|u\.(\w+))(?=,|$)/g)].map((m) => m[1] ?? m[2]);
  expect(aliases).toEqual([...USER_FIELDS]);
});

describe('the check itself', () => {
  test('a column renamed in the database, the SQL not following, is named with its statement', async () => {
    const statement = STATEMENTS.find((s) => s.name === 'users.by_external_id')!;
    await client.query('BEGIN');
    try {
      await client.query('ALTER TABLE users RENAME COLUMN full_name TO display_name');
      expect(await problems(statement)).toEqual([
        expect.stringMatching(/^statement users\.by_external_id: PostgreSQL refuses it: column u\.full_name does not exist/),
      ]);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  test('a column mapped to another field, or of another type than the field, is named with its statement', async () => {
    const base = STATEMENTS.find((s) => s.name === 'sessions.password_by_login')!;
    const swapped = { ...base, text: base.text.replace('SELECT id, password_hash AS "passwordHash"', 'SELECT id, login AS "passwordHash"') };
    expect(await problems(swapped)).toEqual([
      'statement sessions.password_by_login: column passwordHash comes from users.login, but User.passwordHash is users.password_hash',
    ]);
    const typed = { ...base, text: base.text.replace('SELECT id,', 'SELECT id::text AS id,') };
    expect(await problems(typed)).toEqual(['statement sessions.password_by_login: column id is text, but User.id is a Prisma Int']);
    const params = { ...base, params: ['int4', 'int4'] as const };
    expect(await problems(params as unknown as AnyStatement)).toEqual([
      'statement sessions.password_by_login: parameters are ["int4","text"], declared ["int4","int4"]',
    ]);
  });
});
