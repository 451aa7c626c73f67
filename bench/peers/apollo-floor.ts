// A peer of the benchmark: Apollo Server 5 on Fastify through
// @as-integrations/fastify — the versions the service runs — answering
// `{ __typename }`: no resolver, no database. Apollo's own request pipeline
// (parsing, validation, its default plugins, CSRF prevention, JSON out) on
// the same framework: the floor under any GraphQL request of the service.
// Issue 18 measured it above the bare database handler (1.33×), so what the
// service spends beyond it is the service's own work.
//
// Environment: PORT (0), HOST (127.0.0.1). Prints {"msg":"listening",…}; GET /healthz.
import type { AddressInfo } from 'node:net';
import { ApolloServer } from '@apollo/server';
import fastifyApollo, { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import Fastify from 'fastify';

const env = process.env;

async function main(): Promise<void> {
  const app = Fastify({ logger: false });
  const apollo = new ApolloServer({
    typeDefs: 'type Query { ok: Boolean }',
    resolvers: { Query: { ok: () => true } },
    plugins: [fastifyApolloDrainPlugin(app)],
  });
  await apollo.start();
  await app.register(fastifyApollo(apollo), { path: '/graphql' });
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.listen({ port: Number(env.PORT || 0), host: env.HOST || '127.0.0.1' });
  const { address, port } = app.server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: 'listening', address: `http://${address}:${port}` })}\n`);
  const stop = () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
    setTimeout(() => process.exit(1), 5_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`apollo peer: ${String(error)}\n`);
  process.exit(1);
});
