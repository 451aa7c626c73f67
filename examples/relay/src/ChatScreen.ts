// The chat screen's query: who is signed in (the session and the viewer's
// user, whose numeric ids can be equal: see environment.ts's getDataID), the
// dialog list, and one dialog's history (DialogHistory_dialog; `node` may
// answer another type, so the spread is @alias'd: null unless a Dialog).
import { graphql } from 'relay-runtime';

export const ChatScreenQuery = graphql`
  query ChatScreenQuery($dialogId: ID!, $count: Int = 20, $dialogs: Int = 10) {
    session {
      id
      userId
    }
    viewer {
      user {
        id
        databaseId
        login
      }
      dialogs(first: $dialogs) {
        totalCount
        edges {
          node {
            id
            name
            lastMessage {
              id
              body
            }
          }
        }
      }
    }
    dialog: node(id: $dialogId) {
      ...DialogHistory_dialog @arguments(count: $count) @alias
    }
  }
`;
