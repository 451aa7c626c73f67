// Apps built as src/main.ts builds them, from environment variables
// (appOptionsFromConfig(loadConfig(env))), several over one test database:
// for tests that compare configurations side by side.
import type { AddressInfo } from 'node:net';
import { type App, appOptionsFromConfig, createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import type { Database } from '../../src/db';
import { openTestDatabase } from './service';

export interface ConfiguredApp {
  readonly app: App;
  readonly baseUrl: string;
}

export class ConfiguredApps {
  private database: Database | undefined;
  private readonly apps: App[] = [];

  /** Listens on a free loopback port; rate limits are off unless `env` turns them on. */
  async start(env: Record<string, string> = {}): Promise<ConfiguredApp> {
    this.database ??= await openTestDatabase();
    const app = await createApp({ database: this.database, ...appOptionsFromConfig(loadConfig({ RATE_LIMIT_ENABLED: 'false', ...env })) });
    this.apps.push(app);
    await app.fastify.listen({ host: '127.0.0.1', port: 0 });
    return { app, baseUrl: `http://127.0.0.1:${(app.fastify.server.address() as AddressInfo).port}` };
  }

  async close(): Promise<void> {
    for (const app of this.apps.splice(0)) await app.close();
    await this.database?.close();
    this.database = undefined;
  }
}
