// Deleting: @deleteRecord removes each message in deletedMessageIds (global
// ids) from Relay's store, and so from every connection that held it, with no
// refetch. `outcomes` says what happened to each requested id.
import { graphql } from 'relay-runtime';

export const MessagesDeleteMutation = graphql`
  mutation MessagesDeleteMutation($input: MessagesDeleteInput!) {
    messagesDelete(input: $input) {
      deletedMessageIds @deleteRecord
      outcomes {
        requestedId
        messageId
        status
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
