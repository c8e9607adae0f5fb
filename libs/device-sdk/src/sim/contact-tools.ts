/**
 * The contacts and messages tools of the simulated device: `device.send_message`, `device.list_contacts` and
 * `device.delete_contacts_verified`, plus the contact lookup and delivery the messages app's Send button shares.
 */
import type { JsonValue } from '@ormuz/contracts';
import { DeviceToolError, type ToolArguments } from '../device-executor.js';
import type { SimContact, SimContactSkipReason, SimMessage } from './sim-apps.js';
import { decodeHandle, encodeHandle, fold, invalid, optionalInteger, requiredText } from './sim-arguments.js';
import type { SimState } from './sim-state.js';

const DEFAULT_CONTACTS_LIMIT = 50;
const MAX_BODY_LENGTH = 2000;
const MAX_CONTACT_NAMES = 50;

const digits = (text: string): string => text.replace(/[^0-9]/g, '');
const sameName = (a: string, b: string): boolean => a.normalize('NFC') === b.normalize('NFC');

function requireContacts(s: SimState): void {
  if (!s.contactsAvailable) {
    throw new DeviceToolError(
      'contacts_unavailable',
      'The contacts store is unavailable (the profile is locked); nothing was read or changed. Ask the owner to ' +
        'unlock the phone, then try again.',
    );
  }
}

/** The contact named `to` (any case), or else numbered `to` (its digits, at least 6). */
export function findContact(s: SimState, to: string): SimContact | undefined {
  const wanted = fold(to.trim());
  const byName = s.contacts.find((c) => fold(c.name) === wanted);
  if (byName) return byName;
  const number = digits(to);
  return number.length >= 6 ? s.contacts.find((c) => digits(c.number) === number) : undefined;
}

export function sendMessage(s: SimState, args: ToolArguments): JsonValue {
  const to = requiredText(args, 'recipient', "the contact's exact name or phone number from device.list_contacts");
  const body = requiredText(args, 'message_body', 'the text to send');
  if (body.length > MAX_BODY_LENGTH)
    throw invalid(`message_body is ${body.length} characters; send at most ${MAX_BODY_LENGTH}.`);
  const contact = findContact(s, to);
  if (!contact) {
    throw new DeviceToolError(
      'unknown_recipient',
      `No contact is named or numbered ${JSON.stringify(to)}; nothing was sent. Call device.list_contacts to find the exact name.`,
    );
  }
  const message = deliver(s, contact, body);
  return { message_id: message.id, to: { name: contact.name, number: contact.number }, sent_at: message.sentAt };
}

export function deliver(s: SimState, to: SimContact, body: string): SimMessage {
  const message: SimMessage = { id: `msg-${s.messages.length + 1}`, to, body, sentAt: s.now().toISOString() };
  s.messages.push(message);
  s.version += 1;
  return message;
}

export function listContacts(s: SimState, args: ToolArguments): JsonValue {
  const query = args['name_query'];
  if (query !== undefined && query !== null && typeof query !== 'string')
    throw invalid('name_query must be text, or left out to list everyone.');
  const limit = optionalInteger(args, 'limit', 1, 200) ?? DEFAULT_CONTACTS_LIMIT;
  requireContacts(s);
  const matching =
    typeof query === 'string' && query !== ''
      ? s.contacts.filter((c) => fold(c.name).includes(fold(query)))
      : s.contacts;
  const token = `contacts:${typeof query === 'string' ? query : ''}#${s.contacts.length}`;
  const handle = decodeHandle(args['continuation']);
  if (handle && handle.token !== token) {
    throw new DeviceToolError(
      'stale_continuation',
      'That continuation belongs to another query or the contacts changed; list again without it.',
    );
  }
  const offset = handle?.offset ?? 0;
  const page = matching.slice(offset, offset + limit);
  const partial = offset + page.length < matching.length;
  return {
    contacts: page.map((c) => ({ name: c.name, number: c.number })),
    total: matching.length,
    partial,
    ...(partial ? { continuation: encodeHandle({ token, offset: offset + page.length }) } : {}),
  };
}

function contactsNamed(s: SimState, name: string): SimContact[] {
  return s.contacts.filter((c) => sameName(c.name, name));
}

/**
 * Deletes contacts by exact name (NFC), one at a time, deleting only what it can verify. It first takes its own
 * listing of every name, then right before deleting each one re-reads it: a name with no contact now is skipped as
 * `not_found`, one with several as `ambiguous`, and one whose contact is not the very record it listed (edited,
 * replaced, or absent then) as `changed_since_listed`. Returns `{ deleted, skipped: [{ name, reason }] }`.
 * Stopping mid-way (cancel, deadline: `cancelled`; the store going away: `contacts_unavailable`) fails and names
 * what was already deleted; an unavailable store at the start fails with nothing deleted.
 */
export async function deleteContactsVerified(
  s: SimState,
  args: ToolArguments,
  signal: AbortSignal | undefined,
): Promise<JsonValue> {
  const names = args['contact_names'];
  if (
    !Array.isArray(names) ||
    names.length === 0 ||
    names.length > MAX_CONTACT_NAMES ||
    !names.every((n): n is string => typeof n === 'string' && n.trim() !== '' && n.length <= 200)
  ) {
    throw invalid(
      `contact_names must list 1 to ${MAX_CONTACT_NAMES} exact contact names (each 1 to 200 characters), as ` +
        'device.list_contacts shows them.',
    );
  }
  if (new Set(names.map((n) => n.normalize('NFC'))).size !== names.length)
    throw invalid('contact_names lists a name twice; list each contact once.');
  requireContacts(s);
  const listed = new Map(names.map((name) => [name, contactsNamed(s, name)]));
  const deleted: string[] = [];
  const skipped: { name: string; reason: SimContactSkipReason }[] = [];
  const stop = (code: string, why: string): DeviceToolError =>
    new DeviceToolError(
      code,
      `${why}: deleted ${deleted.length === 0 ? 'nothing' : deleted.join(', ')}; did not touch ` +
        `${names.slice(deleted.length + skipped.length).join(', ')}. List the contacts to see what is left before ` +
        'trying again.',
    );
  for (const name of names) {
    if (signal?.aborted) throw stop('cancelled', 'Stopped before finishing');
    await s.beforeContactCheck?.(name);
    if (signal?.aborted) throw stop('cancelled', 'Stopped before finishing');
    if (!s.contactsAvailable) throw stop('contacts_unavailable', 'The contacts store became unavailable');
    const now = contactsNamed(s, name);
    const then = listed.get(name)!;
    if (now.length === 0) skipped.push({ name, reason: 'not_found' });
    else if (now.length > 1) skipped.push({ name, reason: 'ambiguous' });
    else if (then.length !== 1 || then[0] !== now[0]) skipped.push({ name, reason: 'changed_since_listed' });
    else {
      s.contacts.splice(s.contacts.indexOf(now[0]!), 1);
      s.version += 1;
      deleted.push(name);
    }
  }
  return { deleted, skipped };
}
