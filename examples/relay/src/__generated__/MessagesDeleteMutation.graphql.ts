/**
 * @generated SignedSource<<933fdd47040ac25d20822a244e955c19>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import { ConcreteRequest } from 'relay-runtime';
export type MessageDeleteScope = "FOR_EVERYONE" | "FOR_ME" | "%future added value";
export type MessageDeleteStatus = "DELETED" | "INVALID_ID" | "NOT_FOUND" | "NOT_PERMITTED" | "SKIPPED" | "%future added value";
export type MessagesDeleteErrorCode = "NO_IDS" | "TOO_MANY_IDS" | "WRONG_PERMISSIONS" | "%future added value";
export type MessagesDeleteInput = {
  clientMutationId?: string | null | undefined;
  messageIds: ReadonlyArray<string>;
  scope?: MessageDeleteScope;
};
export type MessagesDeleteMutation$variables = {
  input: MessagesDeleteInput;
};
export type MessagesDeleteMutation$data = {
  readonly messagesDelete: {
    readonly clientMutationId: string | null | undefined;
    readonly deletedMessageIds: ReadonlyArray<string>;
    readonly outcomes: ReadonlyArray<{
      readonly messageId: string | null | undefined;
      readonly requestedId: string;
      readonly status: MessageDeleteStatus;
    }>;
    readonly userErrors: ReadonlyArray<{
      readonly code: MessagesDeleteErrorCode;
      readonly field: ReadonlyArray<string> | null | undefined;
      readonly message: string;
    }>;
  } | null | undefined;
};
export type MessagesDeleteMutation = {
  response: MessagesDeleteMutation$data;
  variables: MessagesDeleteMutation$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "input"
  }
],
v1 = [
  {
    "kind": "Variable",
    "name": "input",
    "variableName": "input"
  }
],
v2 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "deletedMessageIds",
  "storageKey": null
},
v3 = {
  "alias": null,
  "args": null,
  "concreteType": "MessageDeleteOutcome",
  "kind": "LinkedField",
  "name": "outcomes",
  "plural": true,
  "selections": [
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "requestedId",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "messageId",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "status",
      "storageKey": null
    }
  ],
  "storageKey": null
},
v4 = {
  "alias": null,
  "args": null,
  "concreteType": "MessagesDeleteUserError",
  "kind": "LinkedField",
  "name": "userErrors",
  "plural": true,
  "selections": [
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "code",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "field",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "message",
      "storageKey": null
    }
  ],
  "storageKey": null
},
v5 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "clientMutationId",
  "storageKey": null
};
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "MessagesDeleteMutation",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": "MessagesDeletePayload",
        "kind": "LinkedField",
        "name": "messagesDelete",
        "plural": false,
        "selections": [
          (v2/*:: as any*/),
          (v3/*:: as any*/),
          (v4/*:: as any*/),
          (v5/*:: as any*/)
        ],
        "storageKey": null
      }
    ],
    "type": "Mutation",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Operation",
    "name": "MessagesDeleteMutation",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": "MessagesDeletePayload",
        "kind": "LinkedField",
        "name": "messagesDelete",
        "plural": false,
        "selections": [
          (v2/*:: as any*/),
          {
            "alias": null,
            "args": null,
            "filters": null,
            "handle": "deleteRecord",
            "key": "",
            "kind": "ScalarHandle",
            "name": "deletedMessageIds"
          },
          (v3/*:: as any*/),
          (v4/*:: as any*/),
          (v5/*:: as any*/)
        ],
        "storageKey": null
      }
    ]
  },
  "params": {
    "cacheID": "2d7c3ac97702b68771695423986eba3d",
    "id": null,
    "metadata": {},
    "name": "MessagesDeleteMutation",
    "operationKind": "mutation",
    "text": "mutation MessagesDeleteMutation(\n  $input: MessagesDeleteInput!\n) {\n  messagesDelete(input: $input) {\n    deletedMessageIds\n    outcomes {\n      requestedId\n      messageId\n      status\n    }\n    userErrors {\n      code\n      field\n      message\n    }\n    clientMutationId\n  }\n}\n"
  }
};
})();

(node as any).hash = "73f57e6945f277700dfeb31a4c65b79d";

export default node;
