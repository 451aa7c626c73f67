// A dialog's history as a chat screen shows it: the newest messages first
// (`last`), older pages loaded backward (`before`) into one connection that
// Relay keeps in its store under the key DialogHistory_messages. The fragment
// is @refetchable on Dialog (it implements Node), so Relay writes the
// pagination query (DialogHistoryPaginationQuery: `node(id:)` with
// `last`/`before`) itself.
import { graphql } from 'relay-runtime';

export const DialogHistoryFragment = graphql`
  fragment DialogHistory_dialog on Dialog
  @refetchable(queryName: "DialogHistoryPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 20 }, cursor: { type: "String" }) {
    id
    databaseId
    name
    messages(last: $count, before: $cursor) @connection(key: "DialogHistory_messages") {
      edges {
        node {
          id
          ...MessageRow_message
        }
      }
    }
  }
`;
