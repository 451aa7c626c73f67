// The modules that replace or reach into a dependency's internals, for speed
// (src/overrides/README.md: what each replaces, the version it was checked
// against, its guard test, its benchmark section and its off switch). Each
// can be turned off at start (DEPENDENCY_OVERRIDES_OFF), leaving the
// dependency's own code: the first thing to try when an upgrade misbehaves.

/** Every override, by the name DEPENDENCY_OVERRIDES_OFF takes. */
export const OVERRIDES = ['query-hash', 'described-query', 'apollo-route', 'durations'] as const;

export type OverrideName = (typeof OVERRIDES)[number];

/** Whether an override is on, given the names turned off. */
export const overrideOn = (off: readonly OverrideName[] | undefined, name: OverrideName): boolean => !(off ?? []).includes(name);
