import fc from 'fast-check';
import { contentWords, MAX_WORDS_TEXT } from './text.js';

describe('contentWords, the one tokenizer of names, descriptions, queries and tasks', () => {
  it('splits names and prose alike, drops stop words and trims plurals', () => {
    expect(contentWords('device.list_contacts')).toEqual(['device', 'list', 'contact']);
    expect(contentWords('sendMessage to the Contacts, please!')).toEqual(['send', 'message', 'contact']);
    expect(contentWords('access')).toEqual(['access']);
    expect(contentWords('{"confirm": true, "note": null}')).toEqual(['confirm', 'note']);
  });

  it('reads letters and digits of every script and looks no further than its bound', () => {
    expect(contentWords('Отправить сообщение 2 раза')).toEqual(['отправить', 'сообщение', '2', 'раза']);
    expect(contentWords(`${'x '.repeat(MAX_WORDS_TEXT)}beyond`)).not.toContain('beyond');
  });

  it('is total: any string gives lower-case words without separators', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => {
        for (const w of contentWords(text)) {
          expect(w).toBe(w.toLowerCase());
          expect(w).toMatch(/^[\p{L}\p{N}]+$/u);
        }
      }),
    );
  });
});
