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
  // Not pool.query(): it destroys the connection on any error, so every
  // statement the server cancels (statement_timeout, under a slow database)
  // would cost a new connection just when the database can least afford one.
  // A connection that answered with an error is still good; one whose socket
  // failed is not.
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw new StatementError(sql.name, error);
  }
  // A checked-out client's socket error (backend terminated, server gone) is
  // emitted as 'error': without a listener it would crash the process.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    const result = await client.query({ name: sql.name, text: sql.text, values: values as unknown as unknown[] });
    client.removeListener('error', onError);
    client.release(broken);
    return result.rows as Row[];
  } catch (error) {
    client.removeListener('error', onError);
    client.release(broken ?? (isServerAnswer(error) ? undefined : (error as Error)));
    // Socket errors come from Node's own realm, where `instanceof Error` can
    // fail (graphql-js then hides them as "Unexpected error value"): always
    // throw an Error of ours, code kept, for toAppError to classify.
    throw new StatementError(sql.name, error);
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
