import type { RiskVerdictV1 } from '@ormuz/contracts';
import { judgedTargetRefusal } from './judged-target.js';

const MESSAGES = 'com.example.messages';
const verdict = (target_text: string | null, foreground_package = MESSAGES): RiskVerdictV1 => ({
  level: 'low',
  reasons: [],
  judged_on: { foreground_package, target_text, source: 'observation' },
});
const acting = (texts: string[] | null, foregroundPackage = MESSAGES) => ({ foregroundPackage, texts });

describe('judgedTargetRefusal', () => {
  it('lets an action act on what was judged: same app, same text ignoring case, NFC and spaces', () => {
    expect(judgedTargetRefusal(verdict('Envoyer'), acting([' envoyer ']), 'nothing was tapped')).toBeUndefined();
    expect(judgedTargetRefusal(verdict('Cafe\u0301'), acting(['Café']), 'nothing was tapped')).toBeUndefined();
    // An input answers to its field name as well as to what was typed into it.
    expect(
      judgedTargetRefusal(verdict('Message'), acting(['On my way', 'Message']), 'nothing was typed'),
    ).toBeUndefined();
  });

  it('does not check a verdict that says nothing about its target (older servers, other tools)', () => {
    expect(judgedTargetRefusal({ level: 'low', reasons: [] }, acting(['Send']), 'nothing was tapped')).toBeUndefined();
    expect(judgedTargetRefusal(undefined, acting(['Send']), 'nothing was tapped')).toBeUndefined();
  });

  it('refuses another element than the judged one, telling the model to observe and name the element', () => {
    const refusal = judgedTargetRefusal(verdict('Message'), acting(['Send']), 'nothing was tapped');
    expect(refusal).toMatchObject({
      code: 'target_mismatch',
      message:
        'This action was judged as acting on an element showing "Message", but it would act on "Send"; nothing was ' +
        'tapped. Call device.screen_observe, then call again naming the element you mean (ref and target_text).',
    });
  });

  it('refuses an element when the action was judged on none, and allows acting on nothing', () => {
    expect(judgedTargetRefusal(verdict(null), acting(['Send']), 'nothing was tapped')).toMatchObject({
      code: 'target_mismatch',
      message: expect.stringMatching(/judged as acting on no element, but it would act on "Send"/),
    });
    expect(judgedTargetRefusal(verdict('Send'), acting(null), 'nothing was pressed')).toBeUndefined();
  });

  it('refuses another app in front, whatever the element', () => {
    expect(
      judgedTargetRefusal(verdict('Send'), acting(['Send'], 'com.example.bank'), 'nothing was tapped'),
    ).toMatchObject({
      code: 'foreground_changed',
      message: expect.stringMatching(
        /judged for com\.example\.messages, but com\.example\.bank is in front now; nothing was tapped/,
      ),
    });
  });
});
