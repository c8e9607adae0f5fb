/**
 * What the lexicon covers: for each language, how many words it has for each high-risk concept. Printed by
 * `ormuz risk coverage`; the README keeps the same table (a test checks they agree).
 */
import { HIGH_RISK_CONCEPTS, LANGUAGES, type ConceptId, type LanguageCode } from './lexicon.js';

export interface LanguageCoverage {
  readonly language: LanguageCode;
  readonly name: string;
  readonly script: string;
  /** Words per concept (0 when the language has none for it). */
  readonly words: Readonly<Record<ConceptId, number>>;
  /** Concepts with at least one word. */
  readonly concepts: number;
}

export interface LexiconCoverage {
  readonly concepts: readonly ConceptId[];
  readonly languages: readonly LanguageCoverage[];
  readonly totalWords: number;
}

export function lexiconCoverage(): LexiconCoverage {
  const concepts = HIGH_RISK_CONCEPTS.map((c) => c.id);
  let totalWords = 0;
  const languages = (Object.keys(LANGUAGES) as LanguageCode[]).map((language) => {
    const words = {} as Record<ConceptId, number>;
    for (const concept of HIGH_RISK_CONCEPTS) {
      words[concept.id] = concept.words[language]?.length ?? 0;
      totalWords += words[concept.id];
    }
    return {
      language,
      name: LANGUAGES[language].name,
      script: LANGUAGES[language].script,
      words,
      concepts: concepts.filter((c) => words[c] > 0).length,
    };
  });
  return { concepts, languages, totalWords };
}

/** The coverage as a Markdown table: a row per language, a column per concept, the number of words in each cell. */
export function coverageTable(coverage: LexiconCoverage = lexiconCoverage()): string {
  const header = ['language', 'script', ...coverage.concepts, 'concepts'];
  const rows = coverage.languages.map((l) => [
    `${l.name} (\`${l.language}\`)`,
    l.script,
    ...coverage.concepts.map((c) => (l.words[c] > 0 ? String(l.words[c]) : '–')),
    `${l.concepts}/${coverage.concepts.length}`,
  ]);
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
