// The session paths' arbitraries: POST /session.json's signed requests
// (test/support/fuzz/session-requests.ts) in every encoding, replays of an
// accepted one, and POST /login.json's logins; other bodies now and then.
import fc from 'fast-check';
import { loginSpecArbitrary, type SessionEncoding, sessionSpecArbitrary } from '../../support/fuzz';
import type { Body, Route } from './descriptors';

/** The body of a request to `route`: the session paths' own, or `body` (any body). */
export function sessionPathBodies(body: fc.Arbitrary<Body>): (route: Route) => fc.Arbitrary<Body> {
  const sessionRequest: fc.Arbitrary<Body> = fc.record({
    kind: fc.constant('session' as const),
    spec: sessionSpecArbitrary(),
    encoding: fc.constantFrom<SessionEncoding>('json nested', 'json flat', 'json numbers', 'form', 'form'),
  });
  const loginBody: fc.Arbitrary<Body> = fc.record({ kind: fc.constant('login' as const), spec: loginSpecArbitrary(), form: fc.boolean() });
  const bodyFor = (route: Route): fc.Arbitrary<Body> =>
    route === 'createSession'
      ? fc.oneof({ weight: 8, arbitrary: sessionRequest }, { weight: 1, arbitrary: fc.constant<Body>({ kind: 'replay' }) }, { weight: 2, arbitrary: body })
      : route === 'login'
        ? fc.oneof({ weight: 5, arbitrary: loginBody }, { weight: 1, arbitrary: body })
        : body;
  return bodyFor;
}
