import type { DialogConnectionResolvers } from '../../__generated__/resolvers-types';

export const DialogConnection: DialogConnectionResolvers = {
  // A count of the viewer's dialogs, read only when a client asks for it.
  totalCount: (page, _args, ctx) => ctx.services.dialogs.count(page.viewer),
};
