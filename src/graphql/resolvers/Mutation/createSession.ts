import type { MutationResolvers } from '../../../__generated__/resolvers-types';

// Needs no credentials: the signed request is the credential.
export const createSession: NonNullable<MutationResolvers['createSession']> = (_parent, args, ctx) => ctx.services.sessions.create(args.input, ctx.address);
