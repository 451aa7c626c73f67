// Named prepared statements over the pg pool, for the request paths.
//
// Prisma stays the schema, the migrations and the models (rows come back as
// Prisma's model types), and serves everything off the hot path. The four
// operations of the API run here instead: measured on this machine, one
// indexed lookup costs ~380–570 µs through the Prisma client ($queryRaw /
// findUnique) against ~90 µs as a named statement on pg (see BENCHMARKS.md).
// A named statement is parsed and planned once per connection.
import type { Pool } from 'pg';

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
  try {
    const result = await pool.query({ name: sql.name, text: sql.text, values: values as unknown as unknown[] });
    return result.rows as Row[];
  } catch (error) {
    // Socket errors come from Node's own realm, where `instanceof Error` can
    // fail (graphql-js then hides them as "Unexpected error value"): always
    // throw an Error of ours, code kept, for toAppError to classify.
    throw new StatementError(sql.name, error);
  }
}
