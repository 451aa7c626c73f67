// The admin CLI: `npm run -s admin -- <command> [options]`.
//
// Contract: exactly one JSON object on stdout and exit 0; on failure a message
// on stderr and a non-zero exit (1: the operation failed, 2: bad usage).
// Works against DATABASE_URL when set, else the embedded database.
import '../compile-cache';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { loadConfig, resolveSecretsKey } from '../config';
import { type Database, openDatabase } from '../db';
import { migrate, pendingMigrations, readMigrations } from '../db/migrate';
import { AppError } from '../errors';
import { createProvisioning, type Provisioning } from '../provisioning';
import { publisher, type RevocationBus } from '../scale/revocations';
import { createServices, type Services } from '../services';
import type { ContactInput } from '../services/address-book';
import { LIMITS, PHONE_RULE, positiveInt32 } from '../services/validate';
import { buildInfo } from '../version';
import { userRecord } from './user-record';

type Action = (services: Services, provisioning: Provisioning, database: Database) => Promise<object>;
/** Runs a command's action over the services and provisioning (main's). */
type Run = (action: Action) => void;

function positiveInt(value: string): number {
  const id = positiveInt32(value);
  if (id === undefined) throw new InvalidArgumentError('expected a positive integer');
  return id;
}

function intList(value: string): number[] {
  return value.split(',').map((part) => positiveInt(part.trim()));
}

function contact(value: string, previous: ContactInput[] = []): ContactInput[] {
  const at = value.lastIndexOf(':');
  if (at < 0) throw new InvalidArgumentError('expected <name>:<phone>');
  return [...previous, { name: value.slice(0, at), phone: value.slice(at + 1) }];
}

function buildProgram(run: Run): Command {
  const program = new Command('admin')
    .description('Administration of the chat/user service (prints one JSON object)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stderr.write(s), writeErr: (s) => process.stderr.write(s) });
  migrationCommands(program, run);
  applicationCommands(program, run);
  userCommands(program, run);
  sessionCommands(program, run);
  chatCommands(program, run);
  return program;
}

/**
 * The migrations, for a deploy's migration job (deploy/kubernetes,
 * deploy/compose.yaml) when instances run with MIGRATE_ON_START=false. The
 * database is opened without migrating; `migrate` then applies what is
 * pending under PostgreSQL's advisory lock (a second job, or an instance
 * migrating at start, waits for it).
 */
function migrationCommands(program: Command, run: Run): void {
  program
    .command('migrate')
    .description('apply the pending migrations (under an advisory lock: concurrent runs wait for each other); prints those applied')
    .action(() => {
      migrateOnOpen = false;
      run(async (_s, _p, database) => {
        const applied = await migrate(database.pool);
        return { applied, pending: [] };
      });
    });

  program
    .command('migrate:status')
    .description('list the migrations, applied and pending (exits 3 when some are pending: a check for scripts)')
    .action(() => {
      migrateOnOpen = false;
      run(async (_s, _p, database) => {
        const pending = await pendingMigrations(database.pool);
        const all = readMigrations().map((m) => m.name);
        if (pending.length > 0) process.exitCode = 3;
        return { applied: all.filter((name) => !pending.includes(name)), pending };
      });
    });
}

/** The applications: creation, listing, region, phone keys, keys and secrets. */
function applicationCommands(program: Command, run: Run): void {
  program
    .command('app:create')
    .description('create an application; prints its API key (shown only once) and its auth key and secret')
    .requiredOption('--name <name>', 'application name')
    .option('--region <CC>', 'region phones without a country code are read in (ISO 3166-1 alpha-2, e.g. GB)')
    .action((opts: { name: string; region?: string }) => run((_s, p) => p.applications.create(opts.name, opts.region ?? null)));

  program
    .command('apps:list')
    .description('list the applications: id, name, region, users and live sessions (no key, secret or hash)')
    .action(() => run(async (_s, p) => ({ applications: await p.applications.list() })));

  program
    .command('app:set-region')
    .description("set (or with --none clear) the region phones without a country code are read in; recomputes the application's phone keys and matches")
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .option('--region <CC>', 'ISO 3166-1 alpha-2 country code, e.g. GB')
    .option('--none', 'no region: such phones match by their digits only', false)
    .action((opts: { app: number; region?: string; none: boolean }) =>
      run(async (s) => {
        if ((opts.region === undefined) === !opts.none) throw new AppError('BAD_USER_INPUT', 'give either --region <CC> or --none');
        return s.phoneKeys.setRegion(opts.app, opts.none ? null : opts.region!);
      }),
    );

  program
    .command('phones:normalise')
    .description(
      'recompute the phone keys of stored users and contacts (after the migration phone_keys, or phones written by hand); one transaction per application',
    )
    .option('--app <appId>', 'only this application (default: all)', positiveInt)
    .action((opts: { app?: number }) =>
      run(async (s, p) => {
        const ids = opts.app !== undefined ? [opts.app] : await p.applications.ids();
        const applications = [];
        for (const id of ids) applications.push(await s.phoneKeys.normalise(id));
        return { applications };
      }),
    );

  program
    .command('app:rotate-auth')
    .description('give an application a new auth key and secret (the old ones stop working)')
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .action((opts: { app: number }) => run((_s, p) => p.applications.rotateAuth(opts.app)));

  program
    .command('app:rotate-api-key')
    .description('give an application a new API key (prints it, shown only once); the old one is refused at once, by running instances too')
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .action((opts: { app: number }) =>
      run(async (s, p) => {
        const { apiKey, previousKeyHash } = await p.applications.rotateApiKey(opts.app);
        // Running instances cache checked keys for 5 s: tell them (REDIS_URL, else NOTIFY).
        const told = await tellInstances(s, (auth) => auth.forgetApiKey(previousKeyHash));
        return { apiKey, instancesTold: told };
      }),
    );

  program
    .command('app:disable')
    .alias('apps:disable')
    .description(
      'disable an application: its API key, sessions and session requests are refused (403 APPLICATION_DISABLED) at once, by running instances too; nothing is deleted',
    )
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .action((opts: { app: number }) =>
      run(async (s, p) => {
        const application = await p.applications.setDisabled(opts.app, true);
        // Running instances cache checked keys and sessions for 5 s: tell them (REDIS_URL, else NOTIFY).
        const told = await tellInstances(s, (auth) => auth.forgetApplication(opts.app));
        return { application, instancesTold: told };
      }),
    );

  program
    .command('app:enable')
    .alias('apps:enable')
    .description('enable a disabled application again: its API key and its sessions that have not expired meanwhile are accepted at once')
    // Instances never cache a refusal: nothing to tell them.
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .action((opts: { app: number }) => run(async (_s, p) => ({ application: await p.applications.setDisabled(opts.app, false) })));
}

/** Users and their address books. */
function userCommands(program: Command, run: Run): void {
  program
    .command('user:create')
    .description('create a user')
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .requiredOption('--login <login>', 'login, unique in the application')
    .requiredOption('--password <password>', `password (at least ${LIMITS.passwordMinLength} characters)`)
    .option('--full-name <s>')
    .option('--email <s>')
    .option('--phone <s>', PHONE_RULE.replace(/^phone must be /, ''))
    .option('--website <s>')
    .option('--external-user-id <int>', 'id in an external system, unique in the application', positiveInt)
    .option('--facebook-id <s>')
    .option('--twitter-id <s>')
    .option('--user-tags <a,b>', 'comma-separated tags')
    .action(
      (opts: {
        app: number;
        login: string;
        password: string;
        fullName?: string;
        email?: string;
        phone?: string;
        website?: string;
        externalUserId?: number;
        facebookId?: string;
        twitterId?: string;
        userTags?: string;
      }) =>
        run(async (_s, p) => {
          const { app, userTags, ...fields } = opts;
          const user = await p.users.create({
            ...fields,
            applicationId: app,
            userTags: userTags
              ?.split(',')
              .map((tag) => tag.trim())
              .filter(Boolean),
          });
          return { user: userRecord(user) };
        }),
    );

  program
    .command('contacts:upload')
    .description("upload contacts into a user's address book (global, or --udid's)")
    .requiredOption('--user <userId>', 'user id', positiveInt)
    .option('--udid <udid>', `device id (at most ${LIMITS.udidLength} characters)`)
    .option('--force', 'replace the book with exactly these contacts', false)
    .requiredOption('--contact <name:phone>', 'a contact; repeat for more', contact)
    .action((opts: { user: number; udid?: string; force: boolean; contact: ContactInput[] }) =>
      run(async (s, p) => {
        const applicationId = await p.users.applicationOf(opts.user);
        if (applicationId === null) throw new AppError('BAD_USER_INPUT', `user ${opts.user} does not exist`);
        const caller = { kind: 'user', applicationId, userId: opts.user, via: 'session' } as const;
        const { rejected, ...counts } = await s.addressBook.upload(caller, opts.contact, opts.udid, opts.force);
        // As the REST answer: the contacts not taken are listed only when there are some.
        return rejected.length === 0 ? counts : { ...counts, rejected };
      }),
    );
}

/** Sessions, and the sweep of what expires. */
function sessionCommands(program: Command, run: Run): void {
  program
    .command('session:create')
    .description('create a session token: a user session with --user, else an application session')
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .option('--user <userId>', 'user id', positiveInt)
    .action((opts: { app: number; user?: number }) =>
      run(async (s, p) => {
        const { token, ended } = await p.applications.createSession(opts.app, opts.user);
        if (ended.length === 0) return { token };
        // Past SESSIONS_PER_USER_MAX the user's least recently used sessions
        // ended: running instances may have them cached for 5 s.
        const told = await tellInstances(s, forgetSessions(ended));
        return { token, sessionsEnded: ended.length, instancesTold: told };
      }),
    );

  program
    .command('sessions:list')
    .description("list live sessions (ids, never tokens), most recently used first: an application's, or a user's")
    .option('--app <appId>', 'application id', positiveInt)
    .option('--user <userId>', 'user id', positiveInt)
    .option('--limit <n>', 'at most this many', positiveInt, 100)
    .action((opts: { app?: number; user?: number; limit: number }) =>
      run(async (_s, p) => {
        if (opts.app === undefined && opts.user === undefined) throw new AppError('BAD_USER_INPUT', 'give --app or --user');
        const filter = { ...(opts.app === undefined ? {} : { applicationId: opts.app }), ...(opts.user === undefined ? {} : { userId: opts.user }) };
        return { sessions: await p.applications.liveSessions(filter, opts.limit) };
      }),
    );

  program
    .command('session:revoke')
    .description("end sessions at once, on running instances too: one (--id), a user's (--user) or an application's (--app)")
    .option('--id <sessionId>', 'session id (sessions:list)', positiveInt)
    .option('--user <userId>', 'every session of this user', positiveInt)
    .option('--app <appId>', 'every session of this application', positiveInt)
    .action((opts: { id?: number; user?: number; app?: number }) =>
      run(async (s, p) => {
        const given = [opts.id, opts.user, opts.app].filter((v) => v !== undefined);
        if (given.length !== 1) throw new AppError('BAD_USER_INPUT', 'give exactly one of --id, --user, --app');
        const ended = await p.applications.revokeSessions(
          opts.id !== undefined ? { id: opts.id } : opts.user !== undefined ? { userId: opts.user } : { applicationId: opts.app! },
        );
        // Running instances cache checked sessions for 5 s: tell them (REDIS_URL, else NOTIFY).
        const told = ended.length === 0 ? 'none' : await tellInstances(s, forgetSessions(ended));
        return { sessionsEnded: ended.length, instancesTold: told };
      }),
    );

  program
    .command('sweep')
    .description('remove expired sessions, used nonces, retained deleted content and live events past retention now, as the running sweeper does')
    .action(() =>
      run(async (s) => {
        const result = await s.sweeper.runOnce();
        return { removed: result.removed, batches: result.batches, ...(result.skipped ? { skipped: 'another instance was sweeping' } : {}) };
      }),
    );
}

/** Dialogs and messages. */
function chatCommands(program: Command, run: Run): void {
  program
    .command('dialog:create')
    .description('create a dialog; the owner is always an occupant')
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .requiredOption('--owner <userId>', 'owner user id', positiveInt)
    .requiredOption('--occupants <id,id,...>', 'occupant user ids', intList)
    .option('--type <1|2|3>', 'dialog type', positiveInt, 2)
    .action((opts: { app: number; owner: number; occupants: number[]; type: number }) =>
      run(async (_s, p) => {
        const dialog = await p.chat.createDialog({
          applicationId: opts.app,
          ownerId: opts.owner,
          occupantIds: opts.occupants,
          type: opts.type,
        });
        return { dialog: { id: dialog.id, owner_id: dialog.ownerId, occupant_ids: dialog.occupantIds, type: dialog.type } };
      }),
    );

  program
    .command('message:create')
    .description('create a message in a dialog')
    .requiredOption('--dialog <dialogId>', 'dialog id')
    .requiredOption('--sender <userId>', 'sender user id (an occupant)', positiveInt)
    .requiredOption('--body <text>', 'message text')
    .action((opts: { dialog: string; sender: number; body: string }) =>
      run(async (_s, p) => {
        const message = await p.chat.createMessage({ dialogId: opts.dialog, senderId: opts.sender, body: opts.body });
        return { message: { id: message.id } };
      }),
    );

  program
    .command('messages:delete')
    .description(
      "delete messages by the spec's rules, as the user (--as) or the application: for the user alone, or with --for-everyone for every occupant; subscribers are told as of any delete",
    )
    .requiredOption('--app <appId>', 'application id', positiveInt)
    .requiredOption('--ids <id,id,...>', 'message ids (24-hex)')
    .option('--as <userId>', 'acting user (without it: the application, which deletes for everyone)', positiveInt)
    .option('--for-everyone', 'delete for every occupant (the user must own the dialogs)', false)
    .action((opts: { app: number; ids: string; as?: number; forEveryone: boolean }) =>
      run(async (s) => {
        const caller =
          opts.as === undefined
            ? ({ kind: 'application', applicationId: opts.app, via: 'apiKey' } as const)
            : ({ kind: 'user', applicationId: opts.app, userId: opts.as, via: 'apiKey' } as const);
        return s.chat.delete(caller, opts.ids.split(','), opts.forEveryone);
      }),
    );

  program
    .command('messages:list')
    .description("what a user's history of a dialog shows")
    .requiredOption('--dialog <dialogId>', 'dialog id')
    .requiredOption('--as <userId>', 'user id', positiveInt)
    .action((opts: { dialog: string; as: number }) =>
      run(async (s) => {
        const items = await s.chat.history(opts.dialog, opts.as);
        return { items: items.map((m) => ({ id: m.id, sender_id: m.senderId, body: m.body })) };
      }),
    );
}

/** Tells the instances to forget these sessions (token hashes). */
const forgetSessions =
  (tokenHashes: readonly string[]) =>
  async (auth: Services['auth']): Promise<void> => {
    await Promise.all(tokenHashes.map((hash) => auth.forget(hash)));
  };

/**
 * Runs `forget` on the services' credential cache with a publisher to the
 * running instances' revocation channel: Redis when REDIS_URL is set, else
 * NOTIFY on the database server; none for the embedded database (no instance
 * can be running on it: it is this process's). Says which it used; a failure
 * to tell is reported, not thrown (the change is made; instances' caches
 * expire within 5 s anyway).
 */
let tellInstances: (services: Services, forget: (auth: Services['auth']) => Promise<void>) => Promise<string> = async () => 'none';

/** Whether opening the database applies pending migrations (MIGRATE_ON_START); the migration commands apply or inspect them themselves. */
let migrateOnOpen = true;

async function main(argv: string[]): Promise<number> {
  // One JSON object on stdout, as every command (commander's own --version writes plain text).
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(`${JSON.stringify(buildInfo())}\n`);
    return 0;
  }
  let action: Action | undefined;
  const program = buildProgram((a) => {
    action = a;
  });
  try {
    program.parse(argv, { from: 'user' });
  } catch (error) {
    // Commander has already printed its message (help, usage errors) on stderr.
    return error instanceof CommanderError && error.exitCode === 0 ? 0 : 2;
  }
  if (!action) {
    process.stderr.write(program.helpInformation());
    return 2;
  }
  const config = loadConfig();
  const secretsKey = resolveSecretsKey(config).key;
  const database = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.PGLITE_DIR,
    poolMax: 1,
    migrate: migrateOnOpen && (config.MIGRATE_ON_START || config.DATABASE_URL === undefined),
  });
  tellInstances = async (services, forget) => {
    const send = (bus: RevocationBus) => {
      services.auth.useRevocations(bus);
      return forget(services.auth);
    };
    if (config.REDIS_URL !== undefined) {
      // ioredis loads only for the commands that tell instances, and only with a Redis (every call pays what it loads).
      const { connectRedis } = require('../scale/redis') as typeof import('../scale/redis');
      const redis = await connectRedis({ url: config.REDIS_URL, prefix: config.REDIS_KEY_PREFIX, connectTimeoutMs: 5_000 }).catch(() => undefined);
      if (!redis) return 'none: Redis unreachable (instances honour the old key until their cache entry expires, 5 s)';
      try {
        await send(publisher({ redis }));
      } finally {
        await redis.close();
      }
    } else if (database.url !== undefined) {
      await send(
        publisher({
          notify: async (channel, payload) => {
            await database.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
          },
        }),
      );
    } else {
      return 'none';
    }
    return services.auth.revocationFailures > 0
      ? 'none: the message could not be sent (instances honour the old key up to 5 s)'
      : config.REDIS_URL !== undefined
        ? 'redis'
        : 'postgres';
  };
  try {
    // No credentials are checked here: no cache, no background writes.
    const services = createServices(database, {
      auth: { cacheMs: 0 },
      secretsKey,
      sessions: { timestampWindowSeconds: config.SESSION_TIMESTAMP_WINDOW_S, sessionsPerUser: config.SESSIONS_PER_USER_MAX },
      chat: { deletedContentRetentionSeconds: config.DELETED_CONTENT_RETENTION_S },
      // An operator running `sweep` wants it done: batches back to back.
      sweeper: { batchSize: config.SWEEP_BATCH_SIZE, maxShare: 100, liveEventRetentionSeconds: config.LIVE_EVENT_RETENTION_S },
    });
    const result = await action(services, createProvisioning(database, { secretsKey, services }), database);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof AppError || (error as Error).name === 'ConfigError' ? (error as Error).message : String((error as Error).stack ?? error);
    process.stderr.write(`error: ${message}\n`);
    process.exit(1);
  },
);
