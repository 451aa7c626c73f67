import type { SessionResolvers } from '../../__generated__/resolvers-types';

export const Session: SessionResolvers = {
  // The service holds only the token's hash: a session read later echoes the token the request sent.
  token: (session, _args, ctx) => session.token ?? ctx.sessionToken ?? '',
};
