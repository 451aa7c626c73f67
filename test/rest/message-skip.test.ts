// GET /chat/Message.json's skip past more than one page of the walk (the
// service walks skipped messages 1,000 at a time, reading only each page's
// cursors): the page after the skip is the caller's history from there, both
// ways, what they hid not counted; a skip past the end answers no items.
import { useService } from '../support/service';
import { seedTenant } from '../support/seed';

const service = useService();

test('skip walks past pages of 1,000 to the same messages as the history in either order, hidden ones not counted', async () => {
  const t = await seedTenant(service.app.provisioning);
  await service.app.services.chat.createMany({
    dialogId: t.dialogId,
    senderId: t.member.id,
    bodies: Array.from({ length: 2_500 }, (_, i) => `m${i}`),
  });
  // Hidden by the owner: gone from their history, so not counted by their skip.
  const before = await service.app.services.chat.history(t.dialogId, t.owner.id);
  const hidden = before.slice(10, 20).map((m) => m.id);
  expect((await service.call('DELETE', `/chat/Message/${hidden.join(',')}.json`, { headers: t.as.owner })).status).toBe(200);
  const expected = (await service.app.services.chat.history(t.dialogId, t.owner.id)).map((m) => m.id);
  expect(expected).toHaveLength(2_503 - 10);

  const page = async (query: string) => {
    const res = await service.call('GET', `/chat/Message.json?chat_dialog_id=${t.dialogId}&${query}`, { headers: t.as.owner });
    expect(res.status).toBe(200);
    return (res.body.items as { _id: string }[]).map((m) => m._id);
  };
  expect(await page('limit=5&skip=1200')).toEqual(expected.slice(1200, 1205));
  expect(await page('limit=5&skip=2200&sort_desc=date_sent')).toEqual([...expected].reverse().slice(2200, 2205));
  expect(await page('limit=100&skip=2450')).toEqual(expected.slice(2450));
  expect(await page(`limit=5&skip=${expected.length}`)).toEqual([]);
  expect(await page(`limit=5&skip=${expected.length + 1000}&sort_desc=date_sent`)).toEqual([]);
});
