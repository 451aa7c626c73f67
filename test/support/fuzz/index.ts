// Shared pieces of the property-based fuzz tests (test/fuzz/), one module a
// concern; imported through this index (`../support/fuzz`) or directly.
export * from './address-book';
export * from './credentials';
export * from './disposable-sessions';
export * from './requests';
export * from './responses';
export * from './runs';
export * from './session-requests';
export * from './values';
