// Named prepared statements over the pg pool, for the request paths.
//
// Prisma stays the schema, the migrations and the models (rows come back as
// Prisma's model types), and serves everything off the hot path. The four
// operations of the API run here instead: measured on this machine, one
// indexed lookup costs ~380–570 µs through the Prisma client ($queryRaw /
// findUnique) against ~90 µs as a named statement on pg (see BENCHMARKS.md).
// A named statement is parsed and planned once per connection.
import type { Pool, PoolClient } from 'pg';

export interface Statement<Params extends readonly unknown[], Row> {
  readonly name: string;
  readonly text: string;
  /** Phantom types: what the statement takes and returns. */
  readonly _types?: [Params, Row];
}

export function statement<Params extends readonly unknown[], Row>(name: string, text: string): Statement<Params, Row> {
  return { name, text };
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

export async function query<Params extends readonly unknown[], Row>(
  pool: Pool,
  sql: Statement<Params, Row>,
  values: Params,
): Promise<Row[]> {
  return withClient(pool, sql.name, (client) => run(client, sql, values));
}

/**
 * `work` in one transaction on one connection (BEGIN … COMMIT, ROLLBACK when
 * it throws). `name` names the failure, as a statement's name does.
 */
export async function transaction<T>(pool: Pool, name: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, name, async (client) => {
    await client.query('BEGIN');
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
