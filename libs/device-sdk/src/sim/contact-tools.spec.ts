import { SIM_PACKAGES } from './sim-apps.js';
import { SimulatedDevice } from './simulated-device.js';

describe('SimulatedDevice', () => {
  it('sends a message to a contact by name or number, and refuses an unknown recipient', async () => {
    const device = new SimulatedDevice({ now: () => new Date('2026-05-01T10:00:00.000Z') });
    expect(await device.execute('device.send_message', { recipient: 'alice martin', message_body: 'Hello' })).toEqual({
      message_id: 'msg-1',
      to: { name: 'Alice Martin', number: '+33612345678' },
      sent_at: '2026-05-01T10:00:00.000Z',
    });
    expect(
      await device.execute('device.send_message', { recipient: '+1 415 555 0123', message_body: 'Hi' }),
    ).toMatchObject({
      message_id: 'msg-2',
      to: { name: 'Bob Chen' },
    });
    await expect(device.execute('device.send_message', { recipient: 'Zed', message_body: 'Hi' })).rejects.toMatchObject(
      {
        code: 'unknown_recipient',
        message: expect.stringMatching(/device\.list_contacts/),
      },
    );
    expect(device.messages).toHaveLength(2);
  });
});

describe('device.delete_contacts_verified', () => {
  const names = (device: SimulatedDevice) => device.contacts.map((c) => c.name);

  it('deletes the contacts it verifies and reports each name', async () => {
    const device = new SimulatedDevice();
    expect(
      await device.execute('device.delete_contacts_verified', { contact_names: ['Bob Chen', 'Zoe Nobody'] }),
    ).toEqual({ deleted: ['Bob Chen'], skipped: [{ name: 'Zoe Nobody', reason: 'not_found' }] });
    expect(names(device)).toEqual(['Alice Martin', 'Chloé Dubois', 'Dmitri Ivanov']);
    expect(device.targetPackage('device.delete_contacts_verified', {})).toBe(SIM_PACKAGES.contacts);
  });

  it('matches exact names only, in any Unicode normalisation form', async () => {
    const device = new SimulatedDevice();
    const decomposed = 'Chloé Dubois'.normalize('NFD');
    expect(
      await device.execute('device.delete_contacts_verified', { contact_names: [decomposed, 'alice martin'] }),
    ).toEqual({ deleted: [decomposed], skipped: [{ name: 'alice martin', reason: 'not_found' }] });
    expect(names(device)).toEqual(['Alice Martin', 'Bob Chen', 'Dmitri Ivanov']);
  });

  it('skips a contact edited between its listing and the re-check, and keeps it', async () => {
    const device = new SimulatedDevice({
      beforeContactCheck: (name, d) => {
        const i = d.contacts.findIndex((c) => c.name === name);
        if (name === 'Alice Martin') d.contacts[i] = { name, number: '+33600000000' };
      },
    });
    expect(
      await device.execute('device.delete_contacts_verified', { contact_names: ['Alice Martin', 'Bob Chen'] }),
    ).toEqual({ deleted: ['Bob Chen'], skipped: [{ name: 'Alice Martin', reason: 'changed_since_listed' }] });
    expect(device.contacts).toContainEqual({ name: 'Alice Martin', number: '+33600000000' });
  });

  it('skips a name whose contact appeared after the listing, and one removed meanwhile', async () => {
    const device = new SimulatedDevice({
      beforeContactCheck: (name, d) => {
        if (name === 'Eve Newcomer') d.contacts.push({ name, number: '+33611111111' });
        if (name === 'Dmitri Ivanov')
          d.contacts.splice(
            d.contacts.findIndex((c) => c.name === name),
            1,
          );
      },
    });
    expect(
      await device.execute('device.delete_contacts_verified', { contact_names: ['Eve Newcomer', 'Dmitri Ivanov'] }),
    ).toEqual({
      deleted: [],
      skipped: [
        { name: 'Eve Newcomer', reason: 'changed_since_listed' },
        { name: 'Dmitri Ivanov', reason: 'not_found' },
      ],
    });
    expect(names(device)).toContain('Eve Newcomer');
  });

  it('never picks one of several contacts with the same name', async () => {
    const device = new SimulatedDevice({
      contacts: [
        { name: 'Bob Chen', number: '+14155550123' },
        { name: 'Bob Chen', number: '+14155550999' },
      ],
    });
    expect(await device.execute('device.delete_contacts_verified', { contact_names: ['Bob Chen'] })).toEqual({
      deleted: [],
      skipped: [{ name: 'Bob Chen', reason: 'ambiguous' }],
    });
    expect(device.contacts).toHaveLength(2);
  });

  it('fails as a whole, deleting nothing, when the contacts store is unavailable', async () => {
    const device = new SimulatedDevice();
    device.contactsAvailable = false;
    await expect(
      device.execute('device.delete_contacts_verified', { contact_names: ['Bob Chen'] }),
    ).rejects.toMatchObject({ code: 'contacts_unavailable' });
    expect(device.contacts).toHaveLength(4);
  });

  it('stops when cancelled and says what it already deleted', async () => {
    const controller = new AbortController();
    const device = new SimulatedDevice({
      beforeContactCheck: (name) => {
        if (name === 'Alice Martin') controller.abort();
      },
    });
    await expect(
      device.execute(
        'device.delete_contacts_verified',
        { contact_names: ['Bob Chen', 'Alice Martin', 'Dmitri Ivanov'] },
        { signal: controller.signal },
      ),
    ).rejects.toMatchObject({
      code: 'cancelled',
      message: expect.stringMatching(/deleted Bob Chen; did not touch Alice Martin, Dmitri Ivanov/),
    });
    expect(names(device)).toEqual(['Alice Martin', 'Chloé Dubois', 'Dmitri Ivanov']);
  });

  it('refuses an empty list and a name listed twice', async () => {
    const device = new SimulatedDevice();
    await expect(device.execute('device.delete_contacts_verified', { contact_names: [] })).rejects.toMatchObject({
      code: 'invalid_arguments',
    });
    await expect(
      device.execute('device.delete_contacts_verified', { contact_names: ['Bob Chen', 'Bob Chen'] }),
    ).rejects.toMatchObject({ code: 'invalid_arguments', message: expect.stringMatching(/twice/) });
    expect(device.contacts).toHaveLength(4);
  });
});
