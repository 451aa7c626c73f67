// The registered users an address book matches, a page at a time, forward:
// @connection on registeredUsersConnection (the key keeps one list per udid),
// and the pagination query Relay writes from @refetchable on Query.
import { graphql } from 'relay-runtime';

export const RegisteredUsersListFragment = graphql`
  fragment RegisteredUsersList_query on Query
  @refetchable(queryName: "RegisteredUsersListPaginationQuery")
  @argumentDefinitions(udid: { type: "String" }, count: { type: "Int", defaultValue: 100 }, cursor: { type: "String" }) {
    registeredUsersConnection(udid: $udid, first: $count, after: $cursor) @connection(key: "RegisteredUsersList_registeredUsersConnection", filters: ["udid"]) {
      edges {
        node {
          id
          databaseId
          login
          phone
        }
      }
    }
  }
`;
