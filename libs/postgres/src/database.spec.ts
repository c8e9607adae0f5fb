import { redactDatabaseUrl } from './database.js';

describe('redactDatabaseUrl', () => {
  it('hides the password and keeps the rest of the URL', () => {
    expect(redactDatabaseUrl('postgres://ormuz:s3cret@db.example:5432/ormuz')).toBe(
      'postgres://ormuz:***@db.example:5432/ormuz',
    );
  });

  it('leaves a URL without a password as it is', () => {
    expect(redactDatabaseUrl('postgres://postgres@127.0.0.1:5432/test')).toBe(
      'postgres://postgres@127.0.0.1:5432/test',
    );
  });

  it('does not echo a string that is not a URL', () => {
    expect(redactDatabaseUrl('postgres://ormuz:s3cret@[bad')).toBe('(unparseable DATABASE_URL)');
  });
});
