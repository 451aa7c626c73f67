// What the resolvers of schema/session.graphql return for a Session: the
// service's view of a session row (it holds the token only when just created).
export type { SessionView as SessionMapper } from '../../services/sessions';
