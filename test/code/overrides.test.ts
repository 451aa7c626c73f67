// src/overrides/README.md's table against what is installed and what exists,
// and the service with every override off (DEPENDENCY_OVERRIDES_OFF): the
// dependencies' own code answering the same requests.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { OVERRIDES } from '../../src/overrides';
import { apolloQueryHashesRemembered } from '../../src/overrides/query-hash';
import { seedTenant } from '../support/seed';
import { testDatabaseOptions, useService } from '../support/service';

const ROOT = path.join(__dirname, '..', '..');
const table = readFileSync(path.join(ROOT, 'src/overrides/README.md'), 'utf8')
  .split('\n')
  .filter((line) => line.startsWith('| `'))
  .map((line) =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim()),
  );

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

test('the table lists every override by the name DEPENDENCY_OVERRIDES_OFF takes', () => {
  expect(table.map((row) => row[0]!.replaceAll('`', '')).sort()).toEqual([...OVERRIDES].sort());
});

test.each(table.map((row) => [row[0]!, row] as const))(
  '%s: its module and guard test exist, and each version it was checked against is the installed one',
  (_name, row) => {
    const [, module = '', , checked = '', guard = ''] = row;
    expect(existsSync(path.join(ROOT, 'src/overrides', module.replaceAll('`', '')))).toBe(true);
    expect(existsSync(path.join(ROOT, guard.replaceAll('`', '')))).toBe(true);
    const pairs = [...checked.matchAll(/`([^`]+)` (\d+\.\d+\.\d+)/g)].map((m) => [m[1]!, m[2]!] as const);
    expect(pairs.length).toBeGreaterThan(0);
    for (const [name, version] of pairs) expect(`${name} ${installedVersion(name)}`).toBe(`${name} ${version}`);
  },
);

describe('with every override off', () => {
  const service = useService(() => ({ database: testDatabaseOptions({ describeOnce: false }), overridesOff: OVERRIDES }));

  test('REST and GraphQL answer as always, /metrics counts them, and Apollo hashes queries itself', async () => {
    const t = await seedTenant(service.app.provisioning);
    for (let i = 0; i < 3; i++) {
      const rest = await service.rest('GET', '/users/external/102.json', { headers: t.as.owner });
      expect(rest.status).toBe(200);
      expect(rest.body.user).toMatchObject({ id: t.member.id, external_user_id: 102, login: 'member' });
      const gql = await service.graphql('{ userByExternalId(externalUserId: 102) { id login } }', undefined, t.as.owner);
      expect(gql.body).toEqual({ data: { userByExternalId: { id: t.member.id, login: 'member' } } });
    }
    const metrics = await service.rest('GET', '/metrics');
    expect(metrics.text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/users\/external\/:file",operation="[^"]*",status="200"\} 3$/m);
    expect(apolloQueryHashesRemembered()).toBe(false);
  });
});
