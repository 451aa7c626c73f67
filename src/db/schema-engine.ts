// Offline access to Prisma's schema engine (compiled to WebAssembly), used only
// to diff datamodels into SQL. The Prisma CLI's native engine cannot be
// downloaded here, and the wasm engine's live-database features (push,
// shadow-database diffs) do not work against PostgreSQL catalogs, so nothing
// but offline datamodel-to-datamodel diffs goes through this module.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPg } from '@prisma/adapter-pg';
import { openEmbeddedDatabase } from './embedded';

type DiffTarget = { tag: 'empty' } | { tag: 'schemaDatamodel'; files: { path: string; content: string }[] };

// Node's global WebAssembly, typed just enough for the instantiation below
// (the project's lib settings carry no WebAssembly declarations).
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
};

interface SchemaEngineModule {
  __wbg_set_wasm(exports: Record<string, unknown>): void;
  SchemaEngine: {
    new: (
      options: unknown,
      log: (line: string) => void,
      adapter: unknown,
    ) => Promise<{
      diff(params: unknown): Promise<{ exitCode: number; stdout: string | null }>;
      free(): void;
    }>;
  };
}

let enginePromise: Promise<SchemaEngineModule> | undefined;

/** Instantiates the wasm module by hand: Node 20 cannot `import` a .wasm file. */
async function loadEngineModule(): Promise<SchemaEngineModule> {
  const bindings = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const dir = path.dirname(bindings);
  // A dynamic import keeps this CommonJS module able to load the ESM bindings.
  const bg = (await import(bindings)) as SchemaEngineModule;
  const wasmModule = new WebAssembly.Module(await readFile(path.join(dir, 'schema_engine_bg.wasm')));
  const instance = new WebAssembly.Instance(wasmModule, { './schema_engine_bg.js': bg as never });
  bg.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return bg;
}

/**
 * The SQL script that turns a database shaped like `from` into one shaped like
 * `to` (each a Prisma datamodel, or null for an empty database).
 */
export async function diffDatamodels(from: string | null, to: string): Promise<string> {
  enginePromise ??= loadEngineModule();
  const { SchemaEngine } = await enginePromise;
  // The engine connects to its adapter's database on start even for offline
  // diffs; a throw-away in-memory PGlite serves.
  const scratch = await openEmbeddedDatabase(null);
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPg({ connectionString: scratch.url, max: 1 }));
  const engine = await SchemaEngine.new({ datamodels: [['schema.prisma', to]] }, () => {}, adapter);
  try {
    const target = (content: string | null): DiffTarget =>
      content === null ? { tag: 'empty' } : { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content }] };
    const result = await engine.diff({
      from: target(from),
      to: target(to),
      script: true,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    });
    return result.stdout ?? '';
  } finally {
    engine.free();
    await scratch.close();
  }
}
