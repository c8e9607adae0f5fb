import {
  checkLink,
  EMPTY_CHAIN,
  erasableFields,
  GENESIS_HASH,
  jcs,
  linkEvents,
  type StoredLink,
  type UnlinkedEvent,
} from './archive-chain.js';

const event = (n: number, data: unknown, type = 'ormuz.toolcall.requested.v1'): UnlinkedEvent => ({
  tenant: 'acme',
  stream: 'NS_CALLS',
  seq: n,
  idx: 0,
  id: `evt-${n}`,
  type,
  subject: 'call_1',
  time: new Date('2026-01-02T03:04:05.678Z'),
  source: '/ormuz/policy',
  correlation_id: 'c',
  causation_id: 'c',
  schema_version: 1,
  data,
});

const stored = (rows: ReturnType<typeof linkEvents>): StoredLink[] => rows.map((r) => ({ ...r, erased_at: null }));

describe('RFC 8785 canonical JSON', () => {
  it('sorts members by UTF-16 code units, writes no whitespace and ECMAScript number forms', () => {
    // The ordering example of RFC 8785 section 3.2.3, and its number serialisation.
    expect(
      jcs({
        '\u20ac': 'Euro Sign',
        '\r': 'Carriage Return',
        '\ufb33': 'Hebrew Letter Dalet With Dagesh',
        '1': 'One',
        '\ud83d\ude00': 'Emoji: Grinning Face',
        '\u0080': 'Control',
        '\u00f6': 'Latin Small Letter O With Diaeresis',
      }),
    ).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    expect(jcs({ numbers: [333333333.3333333, 1e30, 4.5, 0.002, 1e-27, -0] })).toBe(
      '{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27,0]}',
    );
    expect(jcs({ b: [true, null, 'x'], a: { d: 1, c: 2 } })).toBe('{"a":{"c":2,"d":1},"b":[true,null,"x"]}');
  });

  it('keeps strings as they are (no Unicode normalisation)', () => {
    expect(jcs('e\u0301')).not.toBe(jcs('\u00e9'));
  });

  it('refuses what JSON cannot carry', () => {
    expect(() => jcs(Number.NaN)).toThrow(/non-finite/);
    expect(() => jcs(1n)).toThrow(/bigint/);
  });
});

describe('the chain', () => {
  const rows = () =>
    stored(
      linkEvents(new Map(), [
        event(1, { call_id: 'call_1', payload: '{"a":1}' }),
        event(2, { call_id: 'call_1', result: { ok: true } }, 'ormuz.toolcall.succeeded.v1'),
        event(3, { reason: 'x' }, 'ormuz.conversation.resumed.v1'),
      ]),
    );

  it('links each event onto the one before, from the genesis hash', () => {
    const [a, b, c] = rows();
    expect([a!.chain_pos, b!.chain_pos, c!.chain_pos]).toEqual([1, 2, 3]);
    expect(a!.prev_hash).toBe(GENESIS_HASH);
    expect(b!.prev_hash).toBe(a!.row_hash);
    expect([a!.erasable_field, b!.erasable_field, c!.erasable_field]).toEqual(['payload', 'result', null]);
    let head = EMPTY_CHAIN;
    for (const r of [a!, b!, c!]) {
      expect(checkLink(r, head)).toBeNull();
      head = { position: r.chain_pos, hash: r.row_hash };
    }
  });

  it('verifies an erased row by its remaining data and kept hashes', () => {
    const [a] = rows();
    const { payload, ...rest } = a!.data as Record<string, unknown>;
    expect(payload).toBeDefined();
    expect(checkLink({ ...a!, data: rest, erased_at: new Date() }, EMPTY_CHAIN)).toBeNull();
    // Gone without an erasure, it is a break.
    expect(checkLink({ ...a!, data: rest }, EMPTY_CHAIN)).toMatchObject({ reason: 'erasable_hash', found: 'missing' });
  });

  it('names what is wrong with a link', () => {
    const [a, b] = rows();
    const after = { position: 1, hash: a!.row_hash };
    expect(checkLink({ ...b!, chain_pos: 3 }, after)).toMatchObject({ position: 2, reason: 'position' });
    expect(checkLink(b!, { position: 1, hash: 'f'.repeat(64) })).toMatchObject({ reason: 'prev_hash' });
    expect(checkLink({ ...b!, data: { call_id: 'call_2', result: { ok: true } } }, after)).toMatchObject({
      reason: 'data_hash',
    });
    expect(checkLink({ ...b!, data: { call_id: 'call_1', result: { ok: false } } }, after)).toMatchObject({
      reason: 'erasable_hash',
    });
    expect(checkLink({ ...b!, subject: 'call_2' }, after)).toMatchObject({
      position: 2,
      event_id: 'evt-2',
      reason: 'row_hash',
      found: b!.row_hash,
    });
  });

  it('maps erasure kinds to the data fields they remove', () => {
    expect(erasableFields(['payloads'])).toEqual(['payload']);
    expect(erasableFields(['results'])).toEqual(['result', 'error']);
  });
});
