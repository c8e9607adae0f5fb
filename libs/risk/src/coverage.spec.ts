import { readFileSync } from 'node:fs';
import { coverageTable, lexiconCoverage } from './coverage.js';
import { HIGH_RISK_CONCEPTS, LANGUAGES } from './lexicon.js';

describe('lexicon coverage', () => {
  it('counts the words of every language for every concept', () => {
    const coverage = lexiconCoverage();
    expect(coverage.languages).toHaveLength(Object.keys(LANGUAGES).length);
    expect(coverage.concepts).toEqual(HIGH_RISK_CONCEPTS.map((c) => c.id));
    const total = HIGH_RISK_CONCEPTS.reduce(
      (n, c) => n + Object.values(c.words).reduce((m, w) => m + (w?.length ?? 0), 0),
      0,
    );
    expect(coverage.totalWords).toBe(total);
    const en = coverage.languages.find((l) => l.language === 'en')!;
    expect(en.words.send).toBe(HIGH_RISK_CONCEPTS.find((c) => c.id === 'send')!.words.en!.length);
  });

  it('is the table the README shows', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const shown = /<!-- risk-coverage:start -->\n([\s\S]*?)\n<!-- risk-coverage:end -->/.exec(readme)?.[1];
    // When this fails after a lexicon change: paste the output of `npx ormuz risk coverage` between the markers.
    expect(shown?.trim()).toBe(coverageTable().trim());
  });
});
