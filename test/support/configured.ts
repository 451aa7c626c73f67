// Apps built as src/main.ts builds them, from environment variables
// (appOptionsFromConfig(loadConfig(env))), several over one test database:
// for tests that compare configurations side by side.
import { type App, appOptionsFromConfig } from '../../src/app';
import { loadConfig } from '../../src/config';
import type { Database } from '../../src/db';
import { openTestDatabase, startService, type TestService } from './service';

export interface ConfiguredApp {
  readonly app: App;
  readonly baseUrl: string;
}

export class ConfiguredApps {
  private database: Database | undefined;
  private readonly started: TestService[] = [];

  /** Listens on a free loopback port; rate limits are off unless `env` turns them on. */
  async start(env: Record<string, string> = {}): Promise<ConfiguredApp> {
    this.database ??= await openTestDatabase();
    const service = await startService({ ...appOptionsFromConfig(loadConfig({ RATE_LIMIT_ENABLED: 'false', ...env })), database: this.database });
    this.started.push(service);
    return { app: service.app, baseUrl: service.baseUrl };
  }

  async close(): Promise<void> {
    for (const service of this.started.splice(0)) await service.close();
    await this.database?.close();
    this.database = undefined;
  }
}
