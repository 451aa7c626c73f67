// What the resolvers of schema/viewer.graphql return for a Viewer: the user
// the request acts as (its fields read everything else through the services).
export type { ViewerRef as ViewerMapper } from '../../services/dialogs';
