// npm run schema:check (scripts/schema-check.ts): the schema of
// schema/*.graphql against the released one (schema/released/schema.graphql);
// a breaking change fails unless schema/CHANGELOG.md's Unreleased section
// acknowledges it. CI runs it on the repository; here, on edited copies.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { lexicographicSortSchema, printSchema } from 'graphql';
import { loadTypeDefs } from '../../src/graphql/schema';
import { CHANGELOG, checkSchema, currentSchema, main, RELEASED_SCHEMA } from '../../scripts/schema-check';

const released = readFileSync(RELEASED_SCHEMA, 'utf8');
const changelog = readFileSync(CHANGELOG, 'utf8');

/** schema/*.graphql with one edit applied (the edit must apply). */
function editedSchema(from: string | RegExp, to: string) {
  const typeDefs = loadTypeDefs();
  const edited = typeDefs.map((sdl) => sdl.replace(from, to));
  expect(edited).not.toEqual(typeDefs);
  return currentSchema(edited);
}

const withUnreleased = (lines: string) => changelog.replace('## Unreleased\n', `## Unreleased\n\n${lines}\n`);

/** main() on copies of the released schema and changelog, with what it printed. */
async function run(args: string[], schema = currentSchema(), log = changelog) {
  const dir = mkdtempSync(path.join(tmpdir(), 'schema-check-'));
  const files = { released: path.join(dir, 'schema.graphql'), changelog: path.join(dir, 'CHANGELOG.md') };
  writeFileSync(files.released, released);
  writeFileSync(files.changelog, log);
  let output = '';
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    output += String(chunk);
    return true;
  });
  const writeError = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    output += String(chunk);
    return true;
  });
  try {
    const code = await main(args, files, schema);
    return { code, output, released: readFileSync(files.released, 'utf8'), changelog: readFileSync(files.changelog, 'utf8') };
  } finally {
    write.mockRestore();
    writeError.mockRestore();
  }
}

test('the repository has no unacknowledged breaking change against the released schema', async () => {
  const check = await checkSchema(released, currentSchema(), changelog);
  expect(check.unacknowledged).toEqual([]);
});

test.each([
  ['a removed field', /\n\s*blobId: Int\n/, '\n', 'FIELD_REMOVED', 'User.blobId'],
  ['a field whose type changed', 'blobId: Int', 'blobId: String', 'FIELD_TYPE_CHANGED', 'User.blobId'],
  ['a non-null result made nullable', 'login: String!', 'login: String', 'FIELD_TYPE_CHANGED', 'User.login'],
  [
    'a new required argument',
    'registeredUsers(udid: String)',
    'registeredUsers(udid: String, page: Int!)',
    'FIELD_ARGUMENT_ADDED',
    'Query.registeredUsers.page',
  ],
  ['a removed input field', '  name: String\n  phone: String\n', '  phone: String\n', 'INPUT_FIELD_REMOVED', 'ContactInput.name'],
])('%s fails the check, which prints the line that would acknowledge it', async (_what, from, to, type, where) => {
  const result = await run([], editedSchema(from, to));
  expect(result.code).toBe(1);
  expect(result.output).toContain('Breaking changes not acknowledged in schema/CHANGELOG.md');
  expect(result.output).toContain(`- \`${type}\` \`${where}\`: <why, and what clients do instead>`);
});

test('a breaking change acknowledged under Unreleased passes; the same line under a released version does not', async () => {
  const schema = editedSchema('blobId: Int', 'blobId: String');
  const line = '- `FIELD_TYPE_CHANGED` `User.blobId`: blob ids became opaque strings; compare them as text.';
  const acknowledged = await run([], schema, withUnreleased(line));
  expect(acknowledged.code).toBe(0);
  expect(acknowledged.output).toContain('Breaking changes, acknowledged:');
  const tooLate = await run([], schema, changelog.replace('## 1.0.0', `${line}\n\n## 1.0.0`).replace('## Unreleased\n', '## Unreleased\n\n## 0.9.0\n'));
  expect(tooLate.code).toBe(1);
});

test('added fields and optional arguments are not breaking; an acknowledgment naming nothing is warned about', async () => {
  const schema = editedSchema('registeredUsers(udid: String): [User!]!', 'registeredUsers(udid: String, page: Int): [User!]!\n  nickname: String');
  const result = await run([], schema, withUnreleased('- `FIELD_REMOVED` `User.nothing`: a stale line'));
  expect(result.code).toBe(0);
  expect(result.output).toMatch(/FIELD_ADDED Query.nickname/);
  expect(result.output).toMatch(/FIELD_ARGUMENT_ADDED Query.registeredUsers.page/);
  expect(result.output).toContain('Warning: this Unreleased line names no breaking change: - `FIELD_REMOVED` `User.nothing`');
});

test('schema:release makes the current schema the released one and opens a new Unreleased section', async () => {
  const schema = editedSchema('blobId: Int', 'blobId: String');
  const line = '- `FIELD_TYPE_CHANGED` `User.blobId`: opaque strings now.';
  const usage = await run(['--release', 'one'], schema, withUnreleased(line));
  expect([usage.code, usage.output]).toEqual([2, 'usage: npm run schema:release -- <version, e.g. 1.2.0>\n']);
  const result = await run(['--release', '1.1.0'], schema, withUnreleased(line));
  expect(result.code).toBe(0);
  expect(result.released).toBe(printSchema(lexicographicSortSchema(schema)));
  expect(result.changelog).toMatch(/## Unreleased\n\n## 1\.1\.0 — \d{4}-\d{2}-\d{2}\n\n- `FIELD_TYPE_CHANGED` `User\.blobId`/);
  // Refused while a breaking change is unacknowledged: nothing is written.
  const refused = await run(['--release', '1.1.0'], schema);
  expect([refused.code, refused.released]).toEqual([1, released]);
});

describe('the deprecation policy (docs/graphql.md, Evolution policy)', () => {
  const TODAY = new Date('2026-11-28T00:00:00Z');
  const deprecating = (reason: string) =>
    editedSchema('  addressBook(udid: String): [Contact!]!', `  addressBook(udid: String): [Contact!]! @deprecated(reason: "${reason}")`);
  const named = withUnreleased('- `Query.addressBook`: deprecated.');

  test("the repository's deprecations keep the policy", async () => {
    expect((await checkSchema(released, currentSchema(), changelog)).policy).toEqual([]);
  });

  test.each([
    ['without an earliest removal', 'Use something else.', named, /must name its earliest removal/],
    ['with less than six months of notice', 'Use x. Removed no earlier than 2027-01-01.', named, /gives less than 182 days' notice/],
    ['not named in the Unreleased section', 'Use x. Removed no earlier than 2027-12-01.', changelog, /does not name `Query.addressBook`/],
  ])('a new deprecation %s fails the check', async (_what, reason, log, breach) => {
    const check = await checkSchema(released, deprecating(reason), log, TODAY);
    expect(check.policy).toEqual([expect.stringMatching(breach)]);
  });

  test('a deprecation with its date and its CHANGELOG line passes', async () => {
    expect((await checkSchema(released, deprecating('Use x. Removed no earlier than 2027-12-01.'), named, TODAY)).policy).toEqual([]);
  });

  test('what the released schema deprecated is not removed before its date, even acknowledged', async () => {
    const releasedDeprecated = released.replace(
      /(\n\s*registeredUsers\(udid: String\): \[User!\]!)/,
      '$1 @deprecated(reason: "Use registeredUsersConnection. Removed no earlier than 2027-06-01.")',
    );
    expect(releasedDeprecated).not.toEqual(released);
    const removed = editedSchema(/\n\s*"""\n\s*Users of the caller's application whose phone[\s\S]*?registeredUsers\(udid: String\): \[User!\]!\n/, '\n');
    const log = withUnreleased('- `FIELD_REMOVED` `Query.registeredUsers`: use registeredUsersConnection.');
    const early = await checkSchema(releasedDeprecated, removed, log, TODAY);
    expect(early.unacknowledged).toEqual([]);
    expect(early.policy).toEqual(['Query.registeredUsers: removed before the end of its notice (no earlier than 2027-06-01)']);
    const later = await checkSchema(releasedDeprecated, removed, log, new Date('2027-06-02T00:00:00Z'));
    expect(later.policy.filter((breach) => breach.startsWith('Query.registeredUsers'))).toEqual([]);
  });
});
