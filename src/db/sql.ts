// Named prepared statements over the pg pool, for the request paths.
//
// Prisma stays the schema, the migrations and the models (rows come back as
// Prisma's model types); its client serves provisioning alone
// (src/provisioning), the writes no request makes. The four
// operations of the API run here instead: measured on this machine, one
// indexed lookup costs ~380–570 µs through the Prisma client ($queryRaw /
// findUnique) against ~90 µs as a named statement on pg (see BENCHMARKS.md).
// A named statement is parsed and planned once per connection.
import type { Pool, PoolClient, Submittable } from 'pg';
import { DescribedOnceQuery } from '../overrides/described-query';
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
  /** Parsed by pg (JSON.parse): what the statement builds is the caller's to read. */
  json: unknown;
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
  LiveEvent: Models.LiveEvent;
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
export function fields<M extends ModelName, const F extends keyof ModelTypes[M] & string>(model: M, names: readonly F[]): { [K in F]: FieldColumn<M, K> } {
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
  /**
   * Whether running it changes what a client asked to change: then a
   * connection lost before its answer leaves the outcome unknown (503
   * WRITE_OUTCOME_UNKNOWN), not "nothing written".
   */
  readonly writes: boolean;
  /** Phantom types: what the statement takes and returns. */
  readonly _types?: [Params, Row];
}

/** Any statement, as the registry lists them. */
export type AnyStatement = Statement<readonly unknown[], unknown>;

/** A data-changing command anywhere in the text (a CTE's too); not SELECT … FOR UPDATE. */
const WRITING = /\b(INSERT\s+INTO|DELETE\s+FROM|MERGE\s+INTO|UPDATE\s+[\w."]+(\s+(AS\s+)?\w+)?\s+SET)\b/i;

/**
 * A named statement: `params` are the PostgreSQL types of $1…$n, `columns`
 * the result in the order the statement returns it, each a model field or a
 * computed value. `writes` defaults to whether the text changes data; a
 * statement whose changes are incidental to what the client asked (a
 * credential check that slides its session) says `false`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}`: no computed columns, which `C & …` leaves as it is.
export function statement<const P extends readonly PgType[], const C extends Record<string, Column> = {}>(definition: {
  name: string;
  params: P;
  columns?: C;
  text: string;
  writes?: boolean;
}): Statement<ParamsOf<P>, RowOf<C>> {
  return {
    name: definition.name,
    text: definition.text,
    params: definition.params,
    columns: definition.columns ?? {},
    writes: definition.writes ?? WRITING.test(definition.text),
  };
}

/** A failed statement, named, with the driver's error code (e.g. ECONNREFUSED, 23505) and the error as cause. */
export class StatementError extends Error {
  override name = 'StatementError';
  readonly code: string | undefined;
  /**
   * A write was sent and its commit was never confirmed: the connection was
   * lost (or the backend terminated, or the client-side bound expired) before
   * the answer, or the wait for the synchronous standby was cancelled. It may
   * or may not have been applied, and may not survive a failover.
   */
  readonly outcomeUnknown: boolean;

  constructor(statementName: string, cause: unknown, options: { outcomeUnknown?: boolean } = {}) {
    const { message, code } = (cause ?? {}) as { message?: unknown; code?: unknown };
    super(`statement ${statementName} failed: ${String(message ?? cause)}`, { cause });
    this.code = typeof code === 'string' ? code : undefined;
    this.outcomeUnknown = options.outcomeUnknown ?? false;
  }
}

/** How long the service waits for statements on a pool: set by openDatabase and by the replicas' pools. */
export interface PoolBounds {
  /**
   * Set per transaction (SET LOCAL), not at connection start: behind
   * PgBouncer in transaction mode a session setting would stay on a server
   * connection other clients then use, and the startup parameter is refused.
   * See openDatabase's `preparedStatements`.
   */
  transactionTimeoutMs?: number;
  /**
   * The client's own bound on waiting for any answer (pg's query_timeout):
   * statement_timeout is the server's, and a server that stopped answering
   * (frozen, or its host cut off) never sends the cancellation.
   */
  queryTimeoutMs?: number;
}

const poolBounds = new WeakMap<Pool, PoolBounds>();
const clientTimeouts = new WeakMap<PoolClient, number>();

export function setPoolBounds(pool: Pool, bounds: PoolBounds): void {
  poolBounds.set(pool, bounds);
}

export async function query<Params extends readonly unknown[], Row>(pool: Pool, sql: Statement<Params, Row>, values: Params): Promise<Row[]> {
  // A bounded statement through a transaction pooler: its own transaction,
  // so that SET LOCAL binds it and nothing else (two more round trips).
  if (poolBounds.get(pool)?.transactionTimeoutMs !== undefined) {
    return transaction(pool, sql.name, (client) => run(client, sql, values), { writes: sql.writes });
  }
  return withClient(
    pool,
    sql.name,
    async (client) => {
      try {
        return await run(client, sql, values);
      } catch (error) {
        // On its own the statement commits as it ends: without its answer, nobody knows whether it did.
        if (sql.writes && !isServerAnswer(error)) throw new StatementError(sql.name, error, { outcomeUnknown: true });
        throw error;
      }
    },
    { writes: sql.writes },
  );
}

/**
 * `work` in one transaction on one connection (BEGIN … COMMIT, ROLLBACK when
 * it throws). `name` names the failure, as a statement's name does. `writes`
 * (default true): whether a COMMIT whose answer never came leaves a write's
 * outcome unknown (false for a read wrapped in a transaction).
 */
export async function transaction<T>(pool: Pool, name: string, work: (client: PoolClient) => Promise<T>, options: { writes?: boolean } = {}): Promise<T> {
  const timeoutMs = poolBounds.get(pool)?.transactionTimeoutMs;
  const writes = options.writes !== false;
  return withClient(
    pool,
    name,
    async (client) => {
      // One round trip for both (a simple query may hold several statements).
      await send(client, timeoutMs === undefined ? 'BEGIN' : `BEGIN; SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}`);
      let result: T;
      try {
        result = await work(client);
      } catch (error) {
        // A connection that cannot roll back is broken: withClient then drops it.
        await send(client, 'ROLLBACK');
        throw error;
      }
      try {
        await send(client, 'COMMIT');
      } catch (error) {
        // An answer (a serialization failure at commit) means it rolled back;
        // a lost connection or a terminated backend (57P01, during the wait for
        // the synchronous standby) may come after the commit.
        if (writes && !isServerAnswer(error)) throw new StatementError(name, error, { outcomeUnknown: true });
        throw error;
      }
      return result;
    },
    { writes },
  );
}

/** A named statement on a client already checked out (inside `transaction`). */
export async function run<Params extends readonly unknown[], Row>(client: PoolClient, sql: Statement<Params, Row>, values: Params): Promise<Row[]> {
  const timeout = clientTimeouts.get(client);
  // Its row description asked for once per connection (src/overrides/described-query.ts).
  const query = new DescribedOnceQuery({ name: sql.name, text: sql.text, values: values as unknown as unknown[] });
  if (timeout !== undefined) query.query_timeout = timeout;
  return new Promise<Row[]>((resolve, reject) => {
    query.callback = (error, result) => (error ? reject(error) : resolve((result as { rows: Row[] }).rows));
    client.query(query as unknown as Submittable);
  });
}

/** A simple-protocol command (BEGIN, COMMIT, a check) under the client-side bound. */
export function send(client: PoolClient, text: string): Promise<unknown> {
  const timeout = clientTimeouts.get(client);
  return timeout === undefined ? client.query(text) : client.query({ text, query_timeout: timeout } as { text: string });
}

/**
 * A pooled connection for `work`. Not pool.query(): it destroys the
 * connection on any error, so every statement the server cancels
 * (statement_timeout, under a slow database) would cost a new connection just
 * when the database can least afford one. A connection that answered with an
 * error is still good; one whose socket failed is not. `writes`: whether
 * `work` makes a write the client asked for, whose unconfirmed commit is then
 * an error (a credential check's incidental touch is not).
 */
export async function withClient<T>(pool: Pool, name: string, work: (client: PoolClient) => Promise<T>, options: { writes?: boolean } = {}): Promise<T> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new StatementError(name, error);
  }
  const timeout = poolBounds.get(pool)?.queryTimeoutMs;
  if (timeout !== undefined) clientTimeouts.set(client, timeout);
  const seen = watch(client);
  seen.broken = seen.unconfirmed = undefined;
  let result: T;
  try {
    result = await work(client);
  } catch (error) {
    // `seen` is set by the client's listeners during work(); TypeScript keeps the reset's narrowing to undefined.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
    client.release(seen.broken ?? (connectionSurvives(error) ? undefined : (error as Error)));
    // Socket errors come from Node's own realm, where `instanceof Error` can
    // fail (graphql-js then hides them as "Unexpected error value"): always
    // throw an Error of ours, code kept, for toAppError to classify.
    throw error instanceof StatementError ? error : new StatementError(name, error);
  }
  const { broken, unconfirmed } = seen;
  client.release(broken);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set during work() (see above)
  if (unconfirmed && options.writes) throw new StatementError(name, unconfirmed, { outcomeUnknown: true });
  return result;
}

/** What a connection reported while checked out (cleared at each checkout). */
interface Seen {
  /** Its socket failed (backend terminated, server gone): it is dropped at release. */
  broken: Error | undefined;
  /** A commit the synchronous standby did not confirm. */
  unconfirmed: Error | undefined;
}

const watched = new WeakMap<PoolClient, Seen>();

/**
 * The listeners of a connection, attached at its first checkout and kept for
 * its life: attaching and removing two listeners (and making their closures)
 * around every statement was ~1% of a lookup's CPU under load (BENCHMARKS.md,
 * issue 18). What they record between checkouts is never read: withClient
 * clears it at each checkout.
 */
function watch(client: PoolClient): Seen {
  let seen = watched.get(client);
  if (seen !== undefined) return seen;
  const state: Seen = { broken: undefined, unconfirmed: undefined };
  // A checked-out client's socket error (backend terminated, server gone) is
  // emitted as 'error': without a listener it would crash the process.
  client.on('error', (error: Error) => {
    state.broken = error;
  });
  // A commit whose wait for the synchronous standby was cancelled (by
  // statement_timeout) is answered as a success with this warning: committed
  // here, perhaps not on the standby that a failover would promote.
  client.on('notice', (notice: { routine?: string | undefined; message?: string | undefined }) => {
    if (notice.routine === 'SyncRepWaitForLSN') state.unconfirmed = new Error(notice.message ?? 'the synchronous standby did not confirm the commit');
  });
  watched.set(client, state);
  seen = state;
  return seen;
}

/**
 * Whether a connection whose statement failed with `error` is still good: the
 * server answered (a constraint, a cancelled statement) and it is the node
 * the pool means to reach. Anything else (a socket error, a timeout of ours)
 * ends the connection.
 */
export const connectionSurvives = (error: unknown): boolean => isServerAnswer(error) && !wrongNode(error);

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

/**
 * 25006 (read-only transaction) on the primary's pool: the connection reached
 * a standby (an old primary demoted by a switchover, before the load balancer
 * noticed). The answer is good, the connection is not: dropped, so that the
 * next one goes where the primary now is.
 */
const wrongNode = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === '25006';
