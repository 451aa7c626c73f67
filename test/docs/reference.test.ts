// The reference pages against the code they describe (as fastify tests its
// Errors.md against its errors): docs/configuration.md's table lists exactly
// the variables src/config.ts reads, with their defaults; docs/errors.md's
// table names every code of src/errors.ts, with its status and Retry-After,
// and no code the service does not have. A renamed variable, a changed
// default or a new code fails here until the page says so.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config';
import { ERRORS } from '../../src/errors';

const ROOT = path.join(__dirname, '..', '..');
const page = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The rows of the first table under a page's first `## ` heading: cells, trimmed. */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('| ') && !/^\|[-| ]+\|$/.test(line))
    .slice(1)
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

describe('docs/configuration.md', () => {
  const rows = tableRows(page('docs/configuration.md'));
  const documented = new Map(rows.flatMap(([names = '', defaultCell = '']) => backticked(names).map((name) => [name, defaultCell] as const)));

  // Read outside the schema (resolveSecretsKey, the server's TLS options): their defaults are sentences.
  const readElsewhere = ['SECRETS_KEY', 'SECRETS_KEY_FILE', 'TLS_CERT_FILE', 'TLS_KEY_FILE'];

  test('lists exactly the variables src/config.ts reads', () => {
    expect([...documented.keys()].filter((name) => !readElsewhere.includes(name)).sort()).toEqual(
      CONFIG_VARIABLES.filter((name) => !readElsewhere.includes(name)).sort(),
    );
  });

  // A list default (SESSION_TOKEN_HEADERS) is stated as the comma-separated value, in any case; an empty one as unset.
  const shown = (value: unknown) =>
    (value === undefined || (Array.isArray(value) && value.length === 0)
      ? 'unset'
      : Array.isArray(value)
        ? value.join(',')
        : JSON.stringify(value).replace(/^"|"$/g, '')
    ).toLowerCase();

  test("states each default as the service applies it: the cell's first backticked value, `unset` for none, and the production one where it differs", () => {
    const defaults = loadConfig({}) as Record<string, unknown>;
    const production = loadConfig({ NODE_ENV: 'production' }) as Record<string, unknown>;
    const wrong: string[] = [];
    for (const name of CONFIG_VARIABLES.filter((n) => !readElsewhere.includes(n))) {
      const cell = documented.get(name) ?? '';
      const stated = cell.startsWith('unset') ? 'unset' : (backticked(cell)[0] ?? '?');
      if (stated.toLowerCase() !== shown(defaults[name])) wrong.push(`${name}: the page says ${stated}, the service uses ${shown(defaults[name])}`);
      // "`x` (`y` when `NODE_ENV=production`)": y in production; no such note: the same value there.
      const inProduction = /`([^`]+)` when `NODE_ENV=production`/.exec(cell)?.[1] ?? stated;
      if (name !== 'NODE_ENV' && inProduction.toLowerCase() !== shown(production[name]))
        wrong.push(`${name}: the page says ${inProduction} in production, the service uses ${shown(production[name])}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('docs/errors.md', () => {
  const rows = tableRows(page('docs/errors.md'));
  /** GraphQL's and Apollo Server's own codes, which the service answers but does not define. */
  const builtIn = ['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED', 'PERSISTED_QUERY_NOT_FOUND'];
  const codeColumn = rows.map((row) => ({ status: row[1] ?? '', codes: backticked(row[3] ?? '').filter((c) => /^[A-Z][A-Z_]+$/.test(c)) }));

  test('names every code of src/errors.ts', () => {
    const named = new Set(codeColumn.flatMap((r) => r.codes));
    expect(Object.keys(ERRORS).filter((code) => !named.has(code))).toEqual([]);
  });

  test('names no code the service does not have', () => {
    expect(codeColumn.flatMap((r) => r.codes).filter((code) => !(code in ERRORS) && !builtIn.includes(code))).toEqual([]);
  });

  test("gives each code's HTTP status and Retry-After where a row has one code and a status", () => {
    const wrong: string[] = [];
    for (const { status, codes } of codeColumn) {
      const code = codes[0] as keyof typeof ERRORS | undefined;
      const number = /^(\d{3})/.exec(status)?.[1];
      if (codes.length !== 1 || !code || !(code in ERRORS) || number === undefined) continue;
      const kind: { status: number; retryAfterSeconds?: number } = ERRORS[code];
      if (Number(number) !== kind.status) wrong.push(`${code}: the page says ${number}, the code answers ${kind.status}`);
      const retry = /Retry-After: (\d+)/.exec(status)?.[1];
      if (kind.retryAfterSeconds !== undefined && retry !== undefined && Number(retry) !== kind.retryAfterSeconds)
        wrong.push(`${code}: the page says Retry-After ${retry}, the code sends ${kind.retryAfterSeconds}`);
    }
    expect(wrong).toEqual([]);
  });
});
