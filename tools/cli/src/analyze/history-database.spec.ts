import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayRowOf, ToolCallEventType } from '@ormuz/contracts';
import { HistoryDatabase } from './history-database.js';
import { SqlRefusedError } from './sql-guard.js';

/** A two-event history as `ormuz replay` writes it, and a file beside it that SQL must not reach. */
function exportFixture(dir: string): { rows: string; secret: string } {
  const event = (seq: number, type: string, data: object) =>
    replayRowOf('calls', {
      seq,
      idx: 0,
      event: {
        specversion: '1.0',
        id: `ev${seq}`,
        source: '/ormuz/policy',
        type,
        time: `2026-03-01T10:00:0${seq}.000Z`,
        subject: 'call_1',
        tenant: 'acme',
        datacontenttype: 'application/json',
        data,
      } as never,
    });
  const rows = join(dir, 'history.ndjson');
  writeFileSync(
    rows,
    [
      event(1, ToolCallEventType.Requested, {
        call_id: 'call_1',
        tool: 'device.tap',
        agent_id: 'a1',
        target: { device_id: 'p1' },
      }),
      event(2, ToolCallEventType.Refused, { call_id: 'call_1', reason_code: 'tool_not_granted', message: 'no' }),
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const secret = join(dir, 'secret.csv');
  writeFileSync(secret, 'password\nhunter2\n');
  return { rows, secret };
}

describe('ormuz analyze: the history database and its SQL guard', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ormuz-analyze-'));
  const { rows, secret } = exportFixture(dir);
  let db: HistoryDatabase;

  beforeAll(async () => {
    db = await HistoryDatabase.load(rows);
  });

  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a query over events and calls, with typed columns', async () => {
    expect(await db.query('SELECT count(*) AS n, min(seq) AS first, typeof(any_value(time)) AS t FROM events')).toEqual(
      {
        columns: ['n', 'first', 't'],
        rows: [[2, 1, 'TIMESTAMP WITH TIME ZONE']],
      },
    );
    expect(await db.query('SELECT tool, agent_id, device_id, outcome, refused_reason FROM calls')).toEqual({
      columns: ['tool', 'agent_id', 'device_id', 'outcome', 'refused_reason'],
      rows: [['device.tap', 'a1', 'p1', 'refused', 'tool_not_granted']],
    });
  });

  const refused: [string, string, RegExp][] = [
    ['a write', "INSERT INTO events (seq, type) VALUES (9, 'x')", /this is insert, which is refused/],
    ['a table', 'CREATE TABLE t AS SELECT 1', /this is create, which is refused/],
    ['a delete', 'DELETE FROM events', /this is delete, which is refused/],
    ['COPY to a file', `COPY events TO '${join(dir, 'out.csv')}'`, /out\.csv.*disabled/],
    [
      'COPY of a query',
      `COPY (SELECT * FROM events) TO '${join(dir, 'out.parquet')}' (FORMAT parquet)`,
      /neither read nor written/,
    ],
    ['ATTACH', `ATTACH '${join(dir, 'other.db')}' AS other`, /this is attach, which is refused/],
    [
      'read_csv of /etc/passwd',
      "SELECT * FROM read_csv('/etc/passwd')",
      /files, URLs and other databases can be neither read nor written/,
    ],
    [
      'a file beside the export',
      `SELECT * FROM '${secret}'`,
      /files, URLs and other databases can be neither read nor written/,
    ],
    [
      'read_text',
      `SELECT content FROM read_text('${secret}')`,
      /files, URLs and other databases can be neither read nor written/,
    ],
    ['a URL', "SELECT * FROM read_parquet('https://example.com/x.parquet')", /can be neither read nor written/],
    ['a setting change', 'SET enable_external_access = true', /this is set, which is refused/],
    ['loading an extension', 'LOAD httpfs', /this is load, which is refused/],
    ['two statements', 'SELECT 1; DROP TABLE events', /this SQL holds 2 statements/],
    ['nothing', '  ', /this SQL holds no statement/],
  ];

  it.each(refused)('refuses %s with a clear error, and the history is unchanged', async (_what, sql, reason) => {
    const err = await db.query(sql).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SqlRefusedError);
    expect((err as Error).message).toMatch(/^(Only one read-only query|The query does not run)/);
    expect((err as Error).message).toMatch(reason);
    expect((await db.query('SELECT count(*) FROM events')).rows).toEqual([[2]]);
    expect(readdirSync(dir).sort()).toEqual(['history.ndjson', 'secret.csv']);
  });

  it('says what is wrong with a query that does not bind', async () => {
    await expect(db.query('SELECT nope FROM events')).rejects.toThrow(/^The query does not run: .*nope/s);
  });

  it('refuses a file that is not an export of replay rows', async () => {
    const cloudevents = join(tmpdir(), `ormuz-analyze-ce-${process.pid}.ndjson`);
    writeFileSync(cloudevents, '{"specversion":"1.0","type":"x","id":"1"}\n');
    await expect(HistoryDatabase.load(cloudevents)).rejects.toThrow(/not an export of ormuz replay rows/);
    rmSync(cloudevents);
    await expect(HistoryDatabase.load(join(dir, 'absent.parquet'))).rejects.toThrow(
      /Cannot read .*absent\.parquet \(ENOENT\)/,
    );
  });
});
