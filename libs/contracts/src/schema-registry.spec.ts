import { assertValid, compileAllSchemas, hasSchema, registerSchema, SchemaViolationError } from './index.js';

describe('the schema registry', () => {
  it('compiles every registered schema (they are compiled on first use, so a bad one would otherwise hide)', () => {
    expect(compileAllSchemas()).toBeGreaterThan(50);
  });

  it('compiles a schema when it is first used, and refuses a second registration of a name', () => {
    registerSchema('test.lazy', { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
    expect(hasSchema('test.lazy')).toBe(true);
    expect(assertValid('test.lazy', { n: 1 })).toEqual({ n: 1 });
    expect(() => assertValid('test.lazy', { n: 'one' })).toThrow(SchemaViolationError);
    expect(() => registerSchema('test.lazy', {})).toThrow(/already registered/);
  });

  it('names the schema ajv refuses, when it is first used', () => {
    registerSchema('test.broken', { type: 'object', properties: { n: { type: 'no-such-type' } } });
    expect(() => assertValid('test.broken', {})).toThrow(/no-such-type|type/);
  });

  it('treats a name with no schema as a violation', () => {
    expect(() => assertValid('test.unregistered', {})).toThrow(/no schema is registered for test.unregistered/);
  });
});
