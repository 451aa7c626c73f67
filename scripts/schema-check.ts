// npm run schema:check — the GraphQL schema (schema/*.graphql) against the
// last released one (schema/released/schema.graphql), by graphql-inspector's
// rules. A breaking change (a removed field, a narrowed type, a new required
// argument…) fails the check unless the Unreleased section of
// schema/CHANGELOG.md acknowledges it, on a line naming its type and path:
//
//   - `FIELD_REMOVED` `User.blobId`: why, and what clients use instead.
//
// Dangerous changes (e.g. a new enum value) are listed and pass.
//
// npm run schema:release -- <version>: the current schema becomes the released
// one, and the Unreleased section becomes <version>'s.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Change, CriticalityLevel, diff } from '@graphql-inspector/core';
import { makeExecutableSchema } from '@graphql-tools/schema';
import {
  buildSchema as buildSdlSchema,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  lexicographicSortSchema,
  printSchema,
} from 'graphql';
import { loadTypeDefs } from '../src/graphql/schema';

const ROOT = path.resolve(__dirname, '..');
export const RELEASED_SCHEMA = path.join(ROOT, 'schema/released/schema.graphql');
export const CHANGELOG = path.join(ROOT, 'schema/CHANGELOG.md');

export interface SchemaCheck {
  breaking: Change[];
  /** Breaking changes the changelog does not acknowledge: these fail the check. */
  unacknowledged: Change[];
  dangerous: Change[];
  safe: Change[];
  /** Acknowledgment lines naming no breaking change (left over, or mistyped). */
  unmatchedAcknowledgments: string[];
  /** Breaches of the deprecation policy (docs/graphql.md, Evolution policy): these fail the check. */
  policy: string[];
}

/** The notice a deprecation gives before its removal (docs/graphql.md, Evolution policy). */
export const NOTICE_DAYS = 182;
const REMOVAL_DATE = /no earlier than (\d{4}-\d{2}-\d{2})/;

/** Every deprecated field, argument, input field and enum value: its path and its reason. */
function deprecations(schema: GraphQLSchema): Map<string, string> {
  const found = new Map<string, string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)) {
      const fields: (GraphQLField<unknown, unknown> | GraphQLInputField)[] = isInputObjectType(type)
        ? Object.values(type.getFields())
        : Object.values<GraphQLField<unknown, unknown>>(type.getFields());
      for (const field of fields) {
        if (field.deprecationReason) found.set(`${type.name}.${field.name}`, field.deprecationReason);
        for (const arg of 'args' in field ? field.args : []) {
          if (arg.deprecationReason) found.set(`${type.name}.${field.name}.${arg.name}`, arg.deprecationReason);
        }
      }
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) if (value.deprecationReason) found.set(`${type.name}.${value.name}`, value.deprecationReason);
    }
  }
  return found;
}

/**
 * The deprecation policy: a new deprecation names its earliest removal ("no
 * earlier than YYYY-MM-DD", at least NOTICE_DAYS after `today`) and the
 * Unreleased section names its path; what the released schema deprecated is
 * not removed before its date.
 */
function policyBreaches(released: GraphQLSchema, current: GraphQLSchema, changes: Change[], unreleased: string, today: Date): string[] {
  const breaches: string[] = [];
  const before = deprecations(released);
  for (const [where, reason] of deprecations(current)) {
    if (before.has(where)) continue;
    const date = REMOVAL_DATE.exec(reason)?.[1];
    const earliest = new Date(today.getTime() + NOTICE_DAYS * 86_400_000).toISOString().slice(0, 10);
    if (!date) breaches.push(`${where}: its deprecation reason must name its earliest removal ("no earlier than YYYY-MM-DD")`);
    else if (date < earliest) breaches.push(`${where}: removal no earlier than ${date} gives less than ${NOTICE_DAYS} days' notice (earliest: ${earliest})`);
    if (!unreleased.includes(`\`${where}\``))
      breaches.push(`${where}: deprecated, but the Unreleased section of schema/CHANGELOG.md does not name \`${where}\``);
  }
  const todayText = today.toISOString().slice(0, 10);
  for (const change of changes) {
    if (!String(change.type).endsWith('_REMOVED') || !change.path) continue;
    const reason = before.get(change.path);
    const date = reason === undefined ? undefined : REMOVAL_DATE.exec(reason)?.[1];
    if (date && date > todayText) breaches.push(`${change.path}: removed before the end of its notice (no earlier than ${date})`);
  }
  return breaches;
}

/** The schema of schema/*.graphql, as clients see it (the SDL alone: no resolvers needed). */
export function currentSchema(typeDefs: string[] = loadTypeDefs()): GraphQLSchema {
  return makeExecutableSchema({ typeDefs });
}

export async function checkSchema(released: string, current: GraphQLSchema, changelog: string, today = new Date()): Promise<SchemaCheck> {
  const releasedSchema = buildSdlSchema(released);
  const changes = await diff(releasedSchema, current);
  const acknowledgments = unreleasedSection(changelog)
    .split('\n')
    .filter((line) => /^\s*[-*]\s/.test(line));
  const breaking = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking);
  const unacknowledged = breaking.filter((change) => !acknowledgments.some((line) => acknowledges(line, change)));
  return {
    breaking,
    unacknowledged,
    dangerous: changes.filter((c) => c.criticality.level === CriticalityLevel.Dangerous),
    safe: changes.filter((c) => c.criticality.level === CriticalityLevel.NonBreaking),
    unmatchedAcknowledgments: acknowledgments.filter((line) => /`[A-Z_]+`/.test(line) && !breaking.some((change) => acknowledges(line, change))),
    policy: policyBreaches(releasedSchema, current, changes, unreleasedSection(changelog), today),
  };
}

/** The line a changelog needs for this change (the reason is the author's to write). */
export function acknowledgmentFor(change: Change): string {
  return `- \`${String(change.type)}\` \`${change.path ?? change.message}\`: <why, and what clients do instead>`;
}

function acknowledges(line: string, change: Change): boolean {
  return line.includes(`\`${String(change.type)}\``) && line.includes(`\`${change.path ?? change.message}\``);
}

const UNRELEASED = /^## Unreleased[^\n]*\n/m;

function unreleasedSection(changelog: string): string {
  const start = UNRELEASED.exec(changelog);
  if (!start) return '';
  const rest = changelog.slice(start.index + start[0].length);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The changelog with its Unreleased section renamed to `version` and an empty one above it. */
export function releasedChangelog(changelog: string, version: string, date: string): string {
  if (!UNRELEASED.test(changelog)) throw new Error('schema/CHANGELOG.md has no "## Unreleased" section');
  return changelog.replace(UNRELEASED, `## Unreleased\n\n## ${version} — ${date}\n`);
}

function report(check: SchemaCheck): string {
  const lines: string[] = [];
  const list = (title: string, changes: Change[]) => {
    if (changes.length === 0) return;
    lines.push(`${title}:`, ...changes.map((c) => `  ${String(c.type)} ${c.path ?? ''}: ${c.message}`));
  };
  list(
    'Breaking changes, acknowledged',
    check.breaking.filter((c) => !check.unacknowledged.includes(c)),
  );
  list('Dangerous changes (clients may need care)', check.dangerous);
  list('Safe changes', check.safe);
  for (const line of check.unmatchedAcknowledgments) lines.push(`Warning: this Unreleased line names no breaking change: ${line.trim()}`);
  if (check.unacknowledged.length > 0) {
    lines.push(
      '',
      'Breaking changes not acknowledged in schema/CHANGELOG.md:',
      ...check.unacknowledged.map((c) => `  ${c.message}`),
      '',
      'Clients built against the released schema may break. If that is intended, add to its "## Unreleased" section:',
      ...check.unacknowledged.map((c) => `  ${acknowledgmentFor(c)}`),
    );
  }
  if (check.policy.length > 0) lines.push('', 'Deprecation policy (docs/graphql.md, Evolution policy):', ...check.policy.map((b) => `  ${b}`));
  if (lines.length === 0) lines.push('No changes against the released schema.');
  return lines.join('\n');
}

/** The command: exit code 0 (no unacknowledged breaking change), 1 (some), 2 (usage). */
export async function main(
  args: string[],
  files = { released: RELEASED_SCHEMA, changelog: CHANGELOG },
  current: GraphQLSchema = currentSchema(),
): Promise<number> {
  const release = args[0] === '--release';
  const version = args[1];
  if (release && (!version || !/^\d+\.\d+\.\d+$/.test(version))) {
    process.stderr.write('usage: npm run schema:release -- <version, e.g. 1.2.0>\n');
    return 2;
  }
  const released = readFileSync(files.released, 'utf8');
  const changelog = readFileSync(files.changelog, 'utf8');
  const check = await checkSchema(released, current, changelog);
  process.stdout.write(`${report(check)}\n`);
  if (check.unacknowledged.length > 0 || check.policy.length > 0) return 1;
  if (release && version) {
    // Printed as the schema artifact is (GraphQL Code Generator sorts it).
    writeFileSync(files.released, printSchema(lexicographicSortSchema(current)));
    writeFileSync(files.changelog, releasedChangelog(changelog, version, new Date().toISOString().slice(0, 10)));
    process.stdout.write(`Released schema ${version}: commit schema/released/schema.graphql and schema/CHANGELOG.md.\n`);
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
