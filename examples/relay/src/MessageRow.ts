// One message of a history, refetchable on its own through `node(id:)`
// (Message implements Node): Relay writes MessageRowRefetchQuery for it.
import { graphql } from 'relay-runtime';

export const MessageRowFragment = graphql`
  fragment MessageRow_message on Message @refetchable(queryName: "MessageRowRefetchQuery") {
    id
    databaseId
    body
    createdAt
    sender {
      id
      databaseId
      login
    }
  }
`;
