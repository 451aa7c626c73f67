// How the service's own pools turn PostgreSQL's text values into JavaScript
// ones: pg's defaults, but timestamptz values (the only timestamps the
// schema has) parsed by postgres-date 2 (a scanner)
// instead of pg-types' regular expressions. A full registered-users answer
// parses three timestamps per user; under the CPU profile pg-types' parseDate
// was 6% of the service's time there (BENCHMARKS.md), and postgres-date 2
// parses the same text to the same instant about 3× faster. Prisma's queries
// are unaffected: its adapter passes parsers of its own with each query.
import { types, type CustomTypesConfig } from 'pg';
import parseTimestamp from 'postgres-date';

// pg's own lookup returns `any` and takes its enum of oids: the function as a
// whole is typed as pg's (the cast at its end).
export const PG_TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    // eslint-disable-next-line @typescript-eslint/no-unsafe-return
    (format ?? 'text') === 'text' && oid === types.builtins.TIMESTAMPTZ
      ? parseTimestamp
      : // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment
        types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};
