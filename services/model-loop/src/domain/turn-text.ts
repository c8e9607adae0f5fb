/**
 * What a turn is about, for choosing which tool schemas a small model is sent with it (see `@ormuz/tool-payload`'s
 * `selectTools`). It reads the runtime's own tool-result format (`tool-result.ts`), so it lives beside it.
 */
import { MAX_WORDS_TEXT } from '@ormuz/catalog';
import type { ConversationMessageV1 } from '@ormuz/contracts';

/**
 * What the coming turn is about: the latest user message and the results that arrived since the model last spoke
 * (each result's runtime sentence and its fenced data, without the fixed fence wording).
 */
export function turnText(messages: readonly ConversationMessageV1[]): string {
  const lastUser = messages.findLast((m) => m.role === 'user');
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  const results = messages.slice(lastAssistant + 1).filter((m) => m.role === 'tool');
  return [lastUser?.content ?? '', ...results.map((m) => resultText(m.content))].join('\n').slice(0, MAX_WORDS_TEXT);
}

function resultText(content: string): string {
  const lines = content.split('\n');
  let head = '';
  try {
    const parsed = JSON.parse(lines[0] ?? '') as { message?: unknown };
    if (typeof parsed.message === 'string') head = parsed.message;
  } catch {
    head = lines[0] ?? '';
  }
  const begin = lines.findIndex((l) => l.startsWith('<<<BEGIN UNTRUSTED DATA '));
  const end = lines.findIndex((l) => l.startsWith('<<<END UNTRUSTED DATA '));
  const data = begin >= 0 && end > begin ? lines.slice(begin + 1, end).join('\n') : '';
  return `${head}\n${data}`;
}
