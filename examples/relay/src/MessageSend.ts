// Sending: the new message is appended to the history connections named by
// `$connections` (ConnectionHandler.getConnectionID(dialogId,
// 'DialogHistory_messages')), with no refetch. Refusals are userErrors.
import { graphql } from 'relay-runtime';

export const MessageSendMutation = graphql`
  mutation MessageSendMutation($input: MessageSendInput!, $connections: [ID!]!) {
    messageSend(input: $input) {
      message @appendNode(connections: $connections, edgeTypeName: "MessageEdge") {
        id
        ...MessageRow_message
      }
      userErrors {
        code
        field
        message
      }
      clientMutationId
    }
  }
`;
