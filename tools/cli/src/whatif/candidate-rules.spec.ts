import { join } from 'node:path';
import { DEVICE_EXTENSION } from '@ormuz/catalog';
import { scratchFiles } from '@ormuz/testing';
import { loadCandidateCatalog, loadCandidateGrants, loadCandidateLexicon } from './candidate-rules.js';

describe('candidate rule files', () => {
  const files = scratchFiles('ormuz-whatif-');
  afterAll(() => files.remove());
  const file = (name: string, content: unknown) => files.write(name, content);

  it('loads a catalog, grants and a lexicon', () => {
    const catalog = loadCandidateCatalog(file('catalog.json', { extensions: [DEVICE_EXTENSION] }));
    expect(catalog.resolve('device.tap')?.name).toBe('device.tap');
    const grants = loadCandidateGrants(
      file('grants.json', { '*': { allow: ['device'], deny: ['device.send_message'] } }),
      'acme',
    );
    expect(grants.get('*')).toEqual({ allow: ['device'], deny: ['device.send_message'] });
    expect(
      loadCandidateLexicon(
        file('lexicon.json', { extra_words: [{ meaning: 'pay', language: 'en', words: ['zorble'] }] }),
      ),
    ).toEqual({ extraHighRiskPackages: [], extraWords: [{ meaning: 'pay', language: 'en', words: ['zorble'] }] });
  });

  it.each([
    [
      'a missing file',
      () => loadCandidateCatalog(join(files.write('present.json', '{}'), '..', 'absent.json')),
      /absent\.json: cannot be read \(ENOENT\)/,
    ],
    [
      'a file that is not JSON',
      () => loadCandidateGrants(file('g1.json', '{"cli": '), 'acme'),
      /g1\.json: is not JSON/,
    ],
    [
      'a list where an object is due',
      () => loadCandidateLexicon(file('l1.json', [])),
      /l1\.json: must hold a JSON object/,
    ],
    [
      'a catalog without extensions',
      () => loadCandidateCatalog(file('c1.json', { tools: [] })),
      /c1\.json: the catalog has "tools"; it may hold only extensions, designer/,
    ],
    [
      'a catalog whose manifest breaks a rule',
      () =>
        loadCandidateCatalog(file('c2.json', { extensions: [{ ...DEVICE_EXTENSION, metadata: { name: 'ormuz' } }] })),
      /c2\.json: is not a loadable catalog: /,
    ],
    [
      'a grant rule that does not parse',
      () => loadCandidateGrants(file('g2.json', { cli: { allow: ['Device.Tap!'] } }), 'acme'),
      /g2\.json: the grant of "cli": Grant rule "Device\.Tap!" is not valid/,
    ],
    [
      'a grant without allow',
      () => loadCandidateGrants(file('g3.json', { cli: { deny: [] } }), 'acme'),
      /g3\.json: the grant of "cli": "allow" must be a list of rules/,
    ],
    [
      'a lexicon entry without words',
      () => loadCandidateLexicon(file('l2.json', { extra_words: [{ meaning: 'pay', language: 'en', words: [] }] })),
      /l2\.json: "extra_words"\[0\] must be/,
    ],
    [
      'a lexicon with an unknown field',
      () => loadCandidateLexicon(file('l3.json', { words: ['pay'] })),
      /l3\.json: the lexicon has "words"/,
    ],
  ])('refuses %s, naming the file and the problem', (_what, load, message) => {
    expect(load).toThrow(message);
  });
});
