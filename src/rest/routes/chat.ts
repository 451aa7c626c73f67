// The chat paths: deleting messages (src/rest/operations/chat.graphql).
import { RestDeleteMessagesDocument } from '../../__generated__/graphql';
import { LIMITS } from '../../services/validate';
import { FLAG, FORM_FLAG, JSON_FLAG, object } from '../openapi-schema';
import { bodyObject, flag, jsonFile, single } from '../parse';
import { jsonOrForm, parameters, type Req, type RestRoute } from './route';

const FORCE = '1: delete for everyone.';
const idList = { type: 'array', items: { type: 'string' }, uniqueItems: true } as const;

export const CHAT_ROUTES: RestRoute[] = [
  {
    method: 'DELETE',
    url: '/chat/Message/:file',
    path: '/chat/Message/{ids}.json',
    style: 'list',
    documents: [RestDeleteMessagesDocument],
    async handle(request: Req, reply, run) {
      const ids = jsonFile(request.params.file).split(',');
      const body = bodyObject(request.body);
      const force = flag('force', body.force ?? single('force', request.query.force));
      const { result } = await run(RestDeleteMessagesDocument, { ids, force });
      return reply.send({ SuccessfullyDeleted: { ids: result.successfullyDeleted }, NotFound: { ids: result.notFound } });
    },
    operationId: 'deleteMessages',
    summary: 'Delete chat messages for the caller, or for everyone',
    tags: ['chat'],
    description: [
      "Without force the messages are hidden from the caller's history only; with force=1 they are deleted for everyone,",
      'which a user may do only as the owner of every dialog involved (else 403 WrongPermissions). An API key without',
      'On-Behalf-Of deletes for everyone within its application; an application session token is refused.',
      'A request that fails a permission check deletes nothing. force is read from the body (JSON or form) or the',
      'query string; the body wins when both are given.',
    ].join(' '),
    schema: {
      params: parameters({
        ids: {
          type: 'string',
          description: `1 to ${LIMITS.idsPerDelete} message ids separated by commas. Ids that name no visible message land in NotFound.`,
          examples: ['6b01a6fd65149db1d1ea789c,ffffffffffffffffffffffff'],
        },
      }),
      querystring: parameters({ force: { ...FLAG, description: FORCE } }),
      body: jsonOrForm(
        { type: 'object', properties: { force: { ...JSON_FLAG, description: FORCE } } },
        { type: 'object', properties: { force: FORM_FLAG } },
        false,
      ),
      success: {
        status: 200,
        description: 'Deleted ids and ids not found.',
        schema: object({
          SuccessfullyDeleted: object({ ids: idList }),
          NotFound: object({
            ids: {
              ...idList,
              description: 'Ids that do not exist, are not visible to the caller, are already deleted or hidden, or are not message ids at all.',
            },
          }),
        }),
      },
    },
    callers: 'any',
    errors: ['WRONG_PERMISSIONS', 'BAD_USER_INPUT', 'WRITE_OUTCOME_UNKNOWN'],
  },
];
