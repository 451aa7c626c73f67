// A named statement that asks for its row description once per connection.
//
// pg runs a named statement as Parse (its first time on a connection), Bind,
// Describe, Execute, Sync: the Describe makes the server send the statement's
// row description (name, table, column, type, size, modifier, format of each
// column) before every result, which pg-protocol parses and pg turns into the
// result's field list each time — for the lookup's 19 columns, the largest
// single cost of a lookup after V8's own (BENCHMARKS.md, "Lookups and the
// GraphQL pipeline"). A
// prepared statement's columns cannot change while it exists on its
// connection (the server refuses to run it with other result types: "cached
// plan must not change result type"), so the description the first run on a
// connection received is kept for that connection, and later runs there
// send Bind, Execute, Sync only and hand pg the kept description. Anything
// else — an unnamed statement, binary results, a connection that has not
// prepared it yet, or has forgotten it after an error — runs as pg runs it.
import { type Connection, type FieldDef, Query as PgQueryClass } from 'pg';

// pg's own encoding of parameter values, as its Query's Bind uses it (no type declarations).

const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/** What of pg's Query (pg/lib/query.js) this relies on, beyond its public type. */
interface PgQuery {
  name?: string;
  text: string;
  values?: unknown[];
  binary?: boolean;
  portal: string;
  rows?: number;
  callback?: (error: Error | null, result?: unknown) => void;
  query_timeout?: number;
  prepare(connection: Connection): void;
  hasBeenParsed(connection: Connection): boolean;
  handleRowDescription(message: { fields: FieldDef[] }): void;
  handleError(error: Error, connection: Connection): void;
  _getRows(connection: Connection, rows: number | undefined): void;
}

interface ConnectionInternals {
  bind(config: { portal: string; statement?: string; values?: unknown[]; binary?: boolean; valueMapper: unknown }): void;
  close(config: { type: 'S'; name?: string }): void;
  sync(): void;
}

const Query = PgQueryClass as unknown as new (config: { name?: string; text: string; values?: unknown[] }) => PgQuery;

/** Row descriptions by connection and statement name. */
const described = new WeakMap<Connection, Map<string, FieldDef[]>>();

export class DescribedOnceQuery extends Query {
  /** The connection this run asked for the description on (its first run there). */
  private describing: Connection | undefined;
  /** false: run as pg runs it, Describe every time (DEPENDENCY_OVERRIDES_OFF=described-query; the pool sets it). */
  describeOnce = true;

  override prepare(connection: Connection): void {
    const once = this.describeOnce && Boolean(this.name) && !this.binary;
    const fields = once && this.hasBeenParsed(connection) ? described.get(connection)?.get(this.name!) : undefined;
    if (fields === undefined) {
      this.describing = once ? connection : undefined;
      super.prepare(connection);
      return;
    }
    // pg's prepare without Parse (done) and without Describe.
    const internals = connection as unknown as ConnectionInternals;
    try {
      internals.bind({ portal: this.portal, statement: this.name, values: this.values, binary: this.binary, valueMapper: prepareValue });
    } catch (error) {
      internals.close({ type: 'S', name: this.name });
      internals.sync();
      this.handleError(error as Error, connection);
      return;
    }
    this.handleRowDescription({ fields });
    this._getRows(connection, this.rows);
  }

  override handleRowDescription(message: { fields: FieldDef[] }): void {
    super.handleRowDescription(message);
    const connection = this.describing;
    if (connection === undefined || this.name === undefined) return;
    this.describing = undefined;
    let statements = described.get(connection);
    if (statements === undefined) described.set(connection, (statements = new Map<string, FieldDef[]>()));
    statements.set(this.name, message.fields);
  }
}
