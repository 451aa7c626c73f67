import { useService } from '../support/service';
import { seedTenant } from '../support/seed';

const service = useService();

test('a user looks up another user of the application by external id', async () => {
  const t = await seedTenant(service.app.provisioning);
  const res = await service.rest('GET', '/users/external/102.json', { headers: t.as.owner });
  expect(res.status).toBe(200);
  expect(res.body.user).toMatchObject({ id: t.member.id, external_user_id: 102, login: 'member' });
});
