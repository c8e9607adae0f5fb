import fc from 'fast-check';
import { assertIdentifier, identifierProblem, InvalidIdentifierError } from './ids.js';
import { aggregateSubject, commandSubject, internalCommandSubject, parseSubject, tenantFilter } from './subjects.js';

describe('identifiers', () => {
  it.each([
    ['acme', undefined],
    ['call_0123-abc', undefined],
    ['a'.repeat(128), undefined],
  ])('accepts %s', (id, problem) => {
    expect(identifierProblem(id)).toBe(problem);
  });

  it.each([
    ['acme.evil', /'\.'/],
    ['acme*', /'\*'/],
    ['acme>', /'>'/],
    ['ac me', /whitespace/],
    ['tab\there', /whitespace/],
    ['a'.repeat(129), /129 characters/],
    ['', /empty/],
    ['-leading', /outside the allowed set/],
    ['é', /outside the allowed set/],
  ])('refuses %j, saying why', (id, why) => {
    expect(identifierProblem(id)).toMatch(why);
  });

  it('refuses non-strings with the type it got', () => {
    expect(identifierProblem(42)).toMatch(/got number/);
    expect(identifierProblem(null)).toMatch(/got null/);
  });

  it('names the field and the fix in the error', () => {
    expect(() => assertIdentifier('tenant', 'a.b')).toThrow(InvalidIdentifierError);
    expect(() => assertIdentifier('tenant', 'a.b')).toThrow(/^tenant "a\.b" is not a valid identifier: .*Use 1 to 128/);
  });

  it('never lets an accepted id add a subject token or a wildcard', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 140 }), (s) => {
        if (identifierProblem(s) !== undefined) return;
        const subject = aggregateSubject('ormuz', 'calls', s, s);
        expect(subject.split('.')).toHaveLength(5);
        expect(subject).not.toMatch(/[*>\s]/);
        expect(parseSubject(subject)).toMatchObject({ tenant: s, id: s });
      }),
      { numRuns: 2000 },
    );
  });
});

describe('subjects', () => {
  it('lays out <namespace>.<context>.<tenant>.<aggregate>.<id>', () => {
    expect(aggregateSubject('ormuz', 'calls', 'acme', 'call_1')).toBe('ormuz.calls.acme.call.call_1');
    expect(tenantFilter('ormuz', 'conversations', 'acme')).toBe('ormuz.conversations.acme.>');
  });

  it('refuses an unsafe tenant or id before building a subject', () => {
    expect(() => aggregateSubject('ormuz', 'calls', 'acme.>', 'x')).toThrow(/tenant/);
    expect(() => aggregateSubject('ormuz', 'calls', 'acme', '*')).toThrow(/call id/);
    expect(() => tenantFilter('ormuz', 'calls', '>')).toThrow(/tenant/);
  });

  it('keeps public commands (<ns>.cmd.…) and service-to-service commands (<ns>.int.…) apart', () => {
    expect(commandSubject('ormuz', 'policy', 'submit')).toBe('ormuz.cmd.policy.submit');
    expect(internalCommandSubject('ormuz', 'policy', 'submit')).toBe('ormuz.int.policy.submit');
  });
});
