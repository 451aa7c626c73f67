// The region an application's phones are read in, and the keys of stored
// phones (admin CLI: app:set-region, phones:normalise).
import type { Pool, PoolClient } from 'pg';
import { run, transaction } from '../db/sql';
import { CONTACT_PHONES, LOCK_APPLICATION_PHONES, REGION, SET_CONTACT_KEYS, SET_REGION, SET_USER_KEYS, USER_PHONES } from '../db/statements/phones';
import { badInput } from '../errors';
import { isRegion, phoneKey, REGION_RULE } from './phones';

/** Rows read and rewritten at a time (one transaction for them all). */
const BATCH = 10_000;

export interface NormaliseResult {
  applicationId: number;
  region: string | null;
  /** Keys written (new, or changed): the rest already said the same. */
  usersUpdated: number;
  contactsUpdated: number;
}

export class PhoneKeysService {
  constructor(private readonly pool: Pool) {}

  /**
   * Sets the region (null: none) and recomputes the application's keys in the
   * same transaction, under the application's exclusive matches lock: uploads
   * and user writes wait, and the matches follow the new keys (the triggers)
   * by the time it commits.
   */
  async setRegion(applicationId: number, region: string | null): Promise<NormaliseResult> {
    if (region !== null && !isRegion(region)) throw badInput('region', REGION_RULE);
    return transaction(this.pool, SET_REGION.name, async (client) => {
      await run(client, LOCK_APPLICATION_PHONES, [applicationId]);
      const [row] = await run(client, SET_REGION, [applicationId, region]);
      if (!row) throw badInput('applicationId', `application ${applicationId} does not exist`);
      return this.rekey(client, applicationId);
    });
  }

  /**
   * Recomputes the keys of the application's stored phones in its region:
   * phones written before keys existed (the migration phone_keys leaves them
   * null), or by another writer than the service (SQL by hand, another program).
   */
  async normalise(applicationId: number): Promise<NormaliseResult> {
    return transaction(this.pool, USER_PHONES.name, async (client) => {
      await run(client, LOCK_APPLICATION_PHONES, [applicationId]);
      return this.rekey(client, applicationId);
    });
  }

  private async rekey(client: PoolClient, applicationId: number): Promise<NormaliseResult> {
    const [app] = await run(client, REGION, [applicationId]);
    if (!app) throw badInput('applicationId', `application ${applicationId} does not exist`);
    const region = app.phoneRegion;
    const rekeyed = (rows: { id: number; phone: string | null; phoneKey: string | null }[]) => {
      const ids: number[] = [];
      const keys: string[] = [];
      for (const row of rows) {
        const key = row.phone === null ? null : phoneKey(row.phone, region);
        if (key !== null && key !== row.phoneKey) {
          ids.push(row.id);
          keys.push(key);
        }
      }
      return { ids, keys };
    };
    let usersUpdated = 0;
    for (let after = 0; ;) {
      const rows = await run(client, USER_PHONES, [applicationId, after, BATCH]);
      if (rows.length === 0) break;
      const { ids, keys } = rekeyed(rows);
      if (ids.length > 0) usersUpdated += (await run(client, SET_USER_KEYS, [ids, keys]))[0]!.updated;
      after = rows.at(-1)!.id;
    }
    let contactsUpdated = 0;
    for (let after = 0; ;) {
      const rows = await run(client, CONTACT_PHONES, [applicationId, after, BATCH]);
      if (rows.length === 0) break;
      const { ids, keys } = rekeyed(rows);
      if (ids.length > 0) contactsUpdated += (await run(client, SET_CONTACT_KEYS, [ids, keys]))[0]!.updated;
      after = rows.at(-1)!.id;
    }
    return { applicationId, region, usersUpdated, contactsUpdated };
  }
}
