/** The Parquet column types of a replay row ({@link ReplayRowV1}), in its order (DuckDB type names). */
import type { ReplayRowV1 } from '@ormuz/contracts';

export const REPLAY_ROW_COLUMNS: Readonly<Record<keyof ReplayRowV1, string>> = Object.freeze({
  seq: 'BIGINT',
  idx: 'INTEGER',
  context: 'VARCHAR',
  id: 'VARCHAR',
  time: 'TIMESTAMPTZ',
  type: 'VARCHAR',
  tenant: 'VARCHAR',
  subject: 'VARCHAR',
  call_id: 'VARCHAR',
  agent_id: 'VARCHAR',
  device_id: 'VARCHAR',
  tool: 'VARCHAR',
  risk: 'VARCHAR',
  outcome: 'VARCHAR',
  data: 'JSON',
});
