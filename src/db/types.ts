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

export const PG_TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (format ?? 'text') === 'text' && oid === types.builtins.TIMESTAMPTZ
      ? parseTimestamp
      : types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
};
