/**
 * What tapping an element does in the simulated apps (and pressing enter on a screen with a submit button, which taps
 * it): navigate, open an app, flip a switch, focus a field, and the two buttons that act: the messages app's Send and
 * the bank app's Confirm transfer.
 */
import { DeviceToolError } from '../device-executor.js';
import { deliver, findContact } from './contact-tools.js';
import { AMOUNT, APPS, SIM_PACKAGES, TRANSFER_PAYEE, euros, type Effect } from './sim-apps.js';
import type { SimState } from './sim-state.js';

export function applyEffect(s: SimState, effect: Effect): void {
  switch (effect.kind) {
    case 'navigate':
      if (s.fg) s.show({ package: s.fg.package, screen: effect.screen });
      return;
    case 'open_app':
      s.show({ package: effect.package, screen: APPS[effect.package]!.home });
      return;
    case 'toggle':
      s.settings[effect.setting] = !s.settings[effect.setting];
      s.version += 1;
      return;
    case 'focus':
      if (s.focus !== effect.field) {
        s.focus = effect.field;
        s.version += 1;
      }
      return;
    case 'send_message':
      sendTyped(s);
      return;
    case 'transfer':
      transferTyped(s);
      return;
    case 'none':
      return;
    default: {
      const unknown: never = effect;
      throw new Error(`unknown tap effect ${JSON.stringify(unknown)}`);
    }
  }
}

/** The messages app's Send button: sends what is typed in To and Message, then shows the conversations. */
function sendTyped(s: SimState): void {
  const { messages } = SIM_PACKAGES;
  const to = s.fieldText(messages, 'compose', 'To').trim();
  const body = s.fieldText(messages, 'compose', 'Message');
  if (to === '' || body.trim() === '') {
    throw new DeviceToolError(
      'nothing_to_send',
      'Send needs a recipient in To and a text in Message; nothing was sent. Type them, then tap Send.',
    );
  }
  const contact = findContact(s, to);
  if (!contact) {
    throw new DeviceToolError(
      'unknown_recipient',
      `No contact is named or numbered ${JSON.stringify(to)}; nothing was sent. Call device.list_contacts to find the exact name.`,
    );
  }
  deliver(s, contact, body);
  for (const field of ['To', 'Message']) s.fields.delete(`${messages}/compose/${field}`);
  s.show({ package: messages, screen: 'inbox' });
}

/** The bank app's Confirm transfer button: moves the typed Amount to the saved payee, then shows the accounts. */
function transferTyped(s: SimState): void {
  const { bank } = SIM_PACKAGES;
  const typed = s.fieldText(bank, 'transfer', 'Amount').trim();
  const match = AMOUNT.exec(typed);
  const cents = match ? Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0')) : 0;
  if (cents <= 0 || cents > s.balanceCents) {
    throw new DeviceToolError(
      'transfer_refused',
      `Amount ${JSON.stringify(typed)} is not an amount from 0.01 to ${euros(s.balanceCents).slice(1)}; no money ` +
        'was moved. Type the amount in Amount (e.g. 25.00), then tap Confirm transfer.',
    );
  }
  s.balanceCents -= cents;
  s.transfers.push({
    id: `trf-${s.transfers.length + 1}`,
    amountCents: cents,
    to: TRANSFER_PAYEE,
    at: s.now().toISOString(),
  });
  s.fields.delete(`${bank}/transfer/Amount`);
  s.show({ package: bank, screen: 'accounts' });
}
