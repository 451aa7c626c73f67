// The users paths: a user by external id (src/rest/operations/user.graphql).
import { RestUserByExternalIdDocument } from '../../__generated__/graphql';
import { LIMITS } from '../../services/validate';
import { object, ref } from '../openapi-schema';
import { integer, jsonFile } from '../parse';
import { parameters, type Req, type RestRoute } from './route';

export const USER_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    url: '/users/external/:file',
    path: '/users/external/{external_user_id}.json',
    style: 'object',
    documents: [RestUserByExternalIdDocument],
    async handle(request: Req, reply, run) {
      const externalUserId = integer('externalUserId', jsonFile(request.params.file));
      const { user } = await run(RestUserByExternalIdDocument, { externalUserId });
      return reply.send({ user });
    },
    operationId: 'userByExternalId',
    summary: "The user of the caller's application with this external id",
    tags: ['users'],
    description: 'A user of another application answers exactly like an unknown id.',
    schema: {
      params: parameters({
        external_user_id: {
          type: 'integer',
          minimum: 1,
          maximum: LIMITS.externalUserIdMax,
          description: 'Any text is accepted in the path; text that is not such an integer answers 422.',
        },
      }),
      success: { status: 200, description: 'The user record.', schema: object({ user: ref('User') }) },
    },
    callers: 'any',
    errors: ['BAD_USER_INPUT', 'NOT_FOUND'],
  },
];
