import { globToRegExp, parseBound, planReplay, resolveTypes } from './replay-query.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');

describe('replay options', () => {
  it('reads a sequence, an RFC 3339 time and a duration ago', () => {
    expect(parseBound('--from', '42', NOW)).toEqual({ seq: 42 });
    expect(parseBound('--from', '2026-03-01T10:00:00+01:00', NOW)).toEqual({ time: new Date('2026-03-01T09:00:00Z') });
    expect(parseBound('--from', '1d2h30s', NOW)).toEqual({ time: new Date('2026-02-28T09:59:30.000Z') });
    expect(parseBound('--from', '2026-02-28T10:00:30Z', NOW)).toEqual({ time: new Date('2026-02-28T10:00:30Z') });
  });

  it('refuses what is none of those, and a time in the future', () => {
    expect(() => parseBound('--from', 'yesterday', NOW)).toThrow(/neither a sequence .* nor a duration ago/);
    expect(() => parseBound('--to', '2026-03-01T12:00:01Z', NOW)).toThrow(
      '--to 2026-03-01T12:00:01Z is in the future (now is 2026-03-01T12:00:00.000Z): nothing is recorded there yet. Leave --to out',
    );
    expect(() => parseBound('--from', '0', NOW)).toThrow('a sequence is a whole number from 1');
  });

  it('expands type globs against the declared types, and lists them for a glob matching none', () => {
    expect(globToRegExp('ormuz.toolcall.*').test('ormuz.toolcall.started.v1')).toBe(true);
    expect(globToRegExp('ormuz.toolcall.*').test('ormuzXtoolcall.started.v1')).toBe(false);
    expect(resolveTypes(['*.succeeded.v1', 'ormuz.device.*'])).toEqual(
      new Map([
        ['calls', ['ormuz.toolcall.succeeded.v1']],
        [
          'devices',
          ['ormuz.device.credential_issued.v1', 'ormuz.device.credentials_ended.v1', 'ormuz.device.report_refused.v1'],
        ],
      ]),
    );
    expect(() => resolveTypes(['ormuz.nothing.*'])).toThrow(
      /matches no event type. Known types: ormuz\.toolcall\.requested\.v1, /,
    );
  });

  it('plans one query per context the filters allow', () => {
    const plan = planReplay({ tenant: 'acme', agent: 'a1', from: '2h', type: ['ormuz.*.started.v1'] }, NOW);
    expect(plan).toEqual({
      fromSeq: 1,
      queries: [
        {
          tenant: 'acme',
          context: 'calls',
          from_time: '2026-03-01T10:00:00.000Z',
          agent_id: 'a1',
          types: ['ormuz.toolcall.started.v1'],
        },
        {
          tenant: 'acme',
          context: 'conversations',
          from_time: '2026-03-01T10:00:00.000Z',
          agent_id: 'a1',
          types: ['ormuz.conversation.started.v1'],
        },
      ],
    });
    expect(planReplay({ tenant: 'acme', call: 'c1', from: '5', to: '9' }, NOW)).toEqual({
      fromSeq: 5,
      queries: [{ tenant: 'acme', context: 'calls', subject: 'c1', to_seq: 9 }],
    });
  });

  it('refuses --from after --to, and a sequence bound over several streams', () => {
    expect(() => planReplay({ tenant: 'acme', context: 'calls', from: '9', to: '5' }, NOW)).toThrow(
      '--from 9 is after --to 5: swap them.',
    );
    expect(() => planReplay({ tenant: 'acme', from: '1h', to: '2h' }, NOW)).toThrow('--from 1h is after --to 2h');
    expect(() => planReplay({ tenant: 'acme', from: '5' }, NOW)).toThrow(/name one with --context/);
  });
});
