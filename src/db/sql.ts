// Named prepared statements over the pg pool, for the request paths.
//
// Prisma stays the schema, the migrations and the models (rows come back as
// Prisma's model types), and serves everything off the hot path. The four
// operations of the API run here instead: measured on this machine, one
// indexed lookup costs ~380–570 µs through the Prisma client ($queryRaw /
// findUnique) against ~90 µs as a named statement on pg (see BENCHMARKS.md).
// A named statement is parsed and planned once per connection.
import type { Pool, PoolClient } from 'pg';
import type * as Models from '../__generated__/prisma/client';

// ---------------------------------------------------------------------------
// Statements, declared with what they take and return. Every statement the
// services run is declared this way in src/db/statements/, and
// test/db/statements.test.ts describes each one on the migrated database:
// its parameter types, and its result columns against the Prisma model
// fields they claim to be (a column renamed in schema.prisma, or a type
// changed, fails there, naming the statement). A field renamed in
// schema.prisma fails `tsc`: columns name model fields through their types.

/** PostgreSQL types of parameters and computed columns, by their pg_type names (_x: array of x). */
export interface PgTypes {
  int4: number;
  text: string;
  bool: boolean;
  timestamptz: Date;
  _int4: number[];
  _text: string[];
  _timestamptz: Date[];
  void: null;
}
export type PgType = keyof PgTypes;

/** The Prisma models rows can be made of. */
export interface ModelTypes {
  Application: Models.Application;
  User: Models.User;
  Session: Models.Session;
  SessionNonce: Models.SessionNonce;
  Dialog: Models.Dialog;
  DialogOccupant: Models.DialogOccupant;
  Message: Models.Message;
  MessageHide: Models.MessageHide;
  RetainedMessageContent: Models.RetainedMessageContent;
  Contact: Models.Contact;
  AddressBookMatch: Models.AddressBookMatch;
}
export type ModelName = keyof ModelTypes;

/** A result column that is a field of a Prisma model: typed as that field (made by `field`, which checks the name). */
export interface FieldColumn<M extends ModelName = ModelName, F extends string = string> {
  readonly model: M;
  readonly field: F;
}

/** A result column the statement computes (a count, a flag, an array): typed by its PostgreSQL type. */
export interface ComputedColumn<T extends PgType = PgType, N extends boolean = boolean> {
  readonly type: T;
  readonly nullable: N;
}

export type Column = FieldColumn | ComputedColumn;

export const field = <M extends ModelName, F extends keyof ModelTypes[M] & string>(model: M, name: F): FieldColumn<M, F> => ({
  model,
  field: name,
});

export const computed = <T extends PgType>(type: T): ComputedColumn<T, false> => ({ type, nullable: false });

/** A computed column that may be NULL. */
export const computedOrNull = <T extends PgType>(type: T): ComputedColumn<T, true> => ({ type, nullable: true });

/** Fields of a model as columns named like the fields: the rows are that model, or a Pick of it. */
export function fields<M extends ModelName, const F extends keyof ModelTypes[M] & string>(
  model: M,
  names: readonly F[],
): { [K in F]: FieldColumn<M, K> } {
  return Object.fromEntries(names.map((name) => [name, field(model, name)])) as { [K in F]: FieldColumn<M, K> };
}

type ColumnValue<C> =
  C extends FieldColumn<infer M, infer F>
    ? F extends keyof ModelTypes[M]
      ? ModelTypes[M][F]
      : never
    : C extends ComputedColumn<infer T, infer N>
      ? PgTypes[T] | (N extends true ? null : never)
      : never;

export type RowOf<C> = { -readonly [K in keyof C]: ColumnValue<C[K]> };
type ParamsOf<P extends readonly PgType[]> = { -readonly [I in keyof P]: PgTypes[P[I]] | null };

export interface Statement<Params extends readonly unknown[], Row> {
  readonly name: string;
  readonly text: string;
  /** Parameter types, as PostgreSQL infers them ($1 first). */
  readonly params: readonly PgType[];
  /** Result columns in order; none for a statement that returns no rows. */
  readonly columns: Readonly<Record<string, Column>>;
  /** Phantom types: what the statement takes and returns. */
  readonly _types?: [Params, Row];
}

/** Any statement, as the registry lists them. */
export type AnyStatement = Statement<readonly unknown[], unknown>;

/**
 * A named statement: `params` are the PostgreSQL types of $1…$n, `columns`
 * the result in the order the statement returns it, each a model field or a
 * computed value.
 */
export function statement<const P extends readonly PgType[], const C extends Record<string, Column> = {}>(definition: {
  name: string;
  params: P;
  columns?: C;
  text: string;
}): Statement<ParamsOf<P>, RowOf<C>> {
  return { name: definition.name, text: definition.text, params: definition.params, columns: definition.columns ?? {} };
}

/** A failed statement, named, with the driver's error code (e.g. ECONNREFUSED, 23505) and the error as cause. */
export class StatementError extends Error {
  override name = 'StatementError';
  readonly code: string | undefined;

  constructor(statementName: string, cause: unknown) {
    const { message, code } = (cause ?? {}) as { message?: unknown; code?: unknown };
    super(`statement ${statementName} failed: ${String(message ?? cause)}`, { cause });
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/**
 * Pools whose statement timeout is set per transaction (SET LOCAL), not at
 * connection start: behind PgBouncer in transaction mode a session setting
 * would stay on a server connection other clients then use, and the startup
 * parameter is refused. See openDatabase's `preparedStatements`.
 */
const transactionTimeouts = new WeakMap<Pool, number>();

export function setTransactionTimeout(pool: Pool, timeoutMs: number): void {
  transactionTimeouts.set(pool, timeoutMs);
}

export async function query<Params extends readonly unknown[], Row>(
  pool: Pool,
  sql: Statement<Params, Row>,
  values: Params,
): Promise<Row[]> {
  // A bounded statement through a transaction pooler: its own transaction,
  // so that SET LOCAL binds it and nothing else (two more round trips).
  if (transactionTimeouts.has(pool)) return transaction(pool, sql.name, (client) => run(client, sql, values));
  return withClient(pool, sql.name, (client) => run(client, sql, values));
}

/**
 * `work` in one transaction on one connection (BEGIN … COMMIT, ROLLBACK when
 * it throws). `name` names the failure, as a statement's name does.
 */
export async function transaction<T>(pool: Pool, name: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const timeoutMs = transactionTimeouts.get(pool);
  return withClient(pool, name, async (client) => {
    // One round trip for both (a simple query may hold several statements).
    await client.query(timeoutMs === undefined ? 'BEGIN' : `BEGIN; SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}`);
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot roll back is broken: withClient then drops it.
      await client.query('ROLLBACK');
      throw error;
    }
  });
}

/** A named statement on a client already checked out (inside `transaction`). */
export async function run<Params extends readonly unknown[], Row>(
  client: PoolClient,
  sql: Statement<Params, Row>,
  values: Params,
): Promise<Row[]> {
  const result = await client.query({ name: sql.name, text: sql.text, values: values as unknown as unknown[] });
  return result.rows as Row[];
}

/**
 * A pooled connection for `work`. Not pool.query(): it destroys the
 * connection on any error, so every statement the server cancels
 * (statement_timeout, under a slow database) would cost a new connection just
 * when the database can least afford one. A connection that answered with an
 * error is still good; one whose socket failed is not.
 */
async function withClient<T>(pool: Pool, name: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new StatementError(name, error);
  }
  // A checked-out client's socket error (backend terminated, server gone) is
  // emitted as 'error': without a listener it would crash the process.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    const result = await work(client);
    client.removeListener('error', onError);
    client.release(broken);
    return result;
  } catch (error) {
    client.removeListener('error', onError);
    client.release(broken ?? (isServerAnswer(error) ? undefined : (error as Error)));
    // Socket errors come from Node's own realm, where `instanceof Error` can
    // fail (graphql-js then hides them as "Unexpected error value"): always
    // throw an Error of ours, code kept, for toAppError to classify.
    throw error instanceof StatementError ? error : new StatementError(name, error);
  }
}

/**
 * An error the server sent over a working connection (a SQLSTATE, e.g. 57014
 * statement timeout, 23505 unique violation), except those that end the
 * session: connection exceptions (08), operator intervention (57P0x: admin
 * shutdown, terminated backend).
 */
function isServerAnswer(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57P');
}
