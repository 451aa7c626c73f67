// The session operations' fields: session (a query), createSession signed as
// QuickBlox SDKs sign (literals; a variable signed when sent), endSession,
// logout and login.
import fc from 'fast-check';
import { loginParts, loginSpecArbitrary, sessionInput, sessionRequestParts, sessionSpecArbitrary } from '../../support/fuzz';
import { type Blocks, type Doc, gqlLiteral, loginArguments } from './documents';

let literalNonces = 0;

export function sessionsFields({ ts, sessionSelection, userSelection }: Blocks) {
  const session = { weight: 1, arbitrary: sessionSelection.map((sel): Doc => [`session ${sel}`]) };
  const createSession = {
    weight: 2,
    // Signed when generated, its nonce made unique (a creation here cannot use up a pair the variables' oracle expects free).
    arbitrary: fc.tuple(sessionSpecArbitrary(), fc.boolean(), sessionSelection).map(([spec, numbers, sel]): Doc => {
      const parts = sessionRequestParts({ ...spec, nonce: `${spec.nonce.slice(0, 50)}~L${(literalNonces++).toString(36)}` }, ts);
      return [`createSession(input: ${gqlLiteral(sessionInput(parts.parameters, numbers))}) ${sel}`];
    }),
  };
  const endSession = { weight: 1, arbitrary: fc.constant<Doc>(['endSession']) };
  const logout = { weight: 1, arbitrary: sessionSelection.map((sel): Doc => [`logout ${sel}`]) };
  const login = { weight: 2, arbitrary: fc.tuple(loginSpecArbitrary(), userSelection).map(([spec, sel]): Doc => [`login(${loginArguments(spec)}) ${sel}`]) };
  // Signed when sent (toRequest), answered as README documents (the property checks it).
  const createSessionVariables = {
    arbitrary: fc.record({ spec: sessionSpecArbitrary(), numbers: fc.boolean() }).map(({ spec, numbers }) => ({
      doc: ['mutation S($i: SessionRequestInput!) { createSession(input: $i) { id applicationId userId nonce signedAt } }'],
      kind: 'mutation' as const,
      variables: {},
      spec,
      numbers,
    })),
    weight: 6,
  };
  const loginVariables = loginSpecArbitrary().map((spec) => ({
    doc: ['mutation L($login: String, $email: String, $password: String) { login(login: $login, email: $email, password: $password) { id login } }'],
    kind: 'mutation' as const,
    variables: Object.fromEntries(Object.entries(loginParts(spec).args).filter(([, v]) => v !== undefined)),
  }));
  return { session, createSession, endSession, logout, login, createSessionVariables, loginVariables };
}
