// The import rules of src/ (`npm run lint` runs them: dependency-cruiser).
//
// Layers, innermost first (docs/development.md, "Layers"):
//   errors.ts                  the error table, which everything may import
//   overrides/                 dependencies' internals replaced (imports only errors.ts of src/)
//   db/, scale/, tracing/      storage (one database or several, Redis) and what everything shares
//   services/, provisioning/  the rules and what they store
//   graphql/, rest/, http/, context.ts, config.ts  the surfaces and their wiring
//   app.ts, app-options.ts, main.ts, cli/  composition
// An inner layer never imports an outer one: a rule's home is the lowest
// layer that can hold it, and a change to how a request arrives cannot
// reach the rules. Type-only imports count too: a cycle that closes through
// a type today becomes a real one the day someone imports a value.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: modules that cannot be read, tested or initialised one without the other.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'storage-and-rules-stay-inside',
      severity: 'error',
      comment: 'db/ and services/ (and provisioning/) never import the configuration, the surfaces or the composition: they take what they need as arguments.',
      from: { path: '^src/(db|scale|services|provisioning)/' },
      to: { path: '^src/(config|context|app|app-options|main)\\.ts$|^src/(http|rest|graphql|cli)/' },
    },
    {
      name: 'storage-below-services',
      severity: 'error',
      comment: 'Storage does not know the rules that use it.',
      from: { path: '^src/(db|scale)/' },
      to: { path: '^src/(services|provisioning)/' },
    },
    {
      name: 'overrides-stand-alone',
      severity: 'error',
      comment:
        "src/overrides/ replaces dependencies' internals (its README's table): each module reaches only its dependency and the error table, so that it can be read, guarded and turned off on its own.",
      from: { path: '^src/overrides/' },
      to: { path: '^src/', pathNot: '^src/(overrides/|errors\\.ts$)' },
    },
    {
      name: 'only-composition-imports-app',
      severity: 'error',
      comment: 'app.ts composes, from its options (app-options.ts, the input of the composition); nothing below them imports either.',
      from: { path: '^src/', pathNot: '^src/(main\\.ts|app\\.ts|cli/)' },
      to: { path: '^src/app(-options)?\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/__generated__/prisma' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
