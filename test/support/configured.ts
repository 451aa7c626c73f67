// Apps built as src/main.ts builds them, from environment variables
// (appOptionsFromConfig(loadConfig(env))), several over one test database:
// for tests that compare configurations side by side.
import { type App, appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import type { Database } from '../../src/db';
import { openTestDatabase, startService, TEST_SESSION_BUDGETS, type TestService } from './service';

export interface ConfiguredApp {
  readonly app: App;
  readonly baseUrl: string;
}

export class ConfiguredApps {
  private database: Database | undefined;
  private readonly started: TestService[] = [];

  /** Listens on a free loopback port; rate limits (and issue 31's session budgets, TEST_SESSION_BUDGETS) are off unless `env` turns them on. */
  async start(env: Record<string, string> = {}): Promise<ConfiguredApp> {
    this.database ??= await openTestDatabase();
    const unbounded = String(TEST_SESSION_BUDGETS.applicationSessions.perAddress);
    const config = loadConfig({
      RATE_LIMIT_ENABLED: 'false',
      PASSWORD_CHECKS_PER_ACCOUNT: unbounded,
      PASSWORD_CHECKS_PER_ADDRESS: unbounded,
      APPLICATION_SESSIONS_PER_APPLICATION: unbounded,
      APPLICATION_SESSIONS_PER_ADDRESS: unbounded,
      CONTACT_DISCOVERY_PER_DAY: unbounded,
      ...env,
    });
    const service = await startService({ ...appOptionsFromConfig(config), database: this.database });
    this.started.push(service);
    return { app: service.app, baseUrl: service.baseUrl };
  }

  async close(): Promise<void> {
    for (const service of this.started.splice(0)) await service.close();
    await this.database?.close();
    this.database = undefined;
  }
}
