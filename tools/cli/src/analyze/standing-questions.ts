/**
 * The questions `ormuz report` answers, each one SQL query over the views `events` and `calls` of a
 * {@link HistoryDatabase}, with the columns its chart draws. The one home of these queries: the text, JSON and HTML
 * reports all run them from here.
 */
import { ConversationEventType } from '@ormuz/contracts';
import { quote } from '../replay/duckdb-sql.js';

export interface StandingQuestion {
  readonly id: string;
  readonly title: string;
  readonly sql: string;
  /** The chart: one bar group per row, labelled by `label` columns, a bar per `values` column. */
  readonly chart: { readonly label: readonly string[]; readonly values: readonly string[] };
}

const pct = (part: string, whole: string) => `round(100.0 * ${part} / nullif(${whole}, 0), 1)`;
const waitSeconds = "date_diff('millisecond', staged_at, decided_at) / 1000.0";

export const STANDING_QUESTIONS: readonly StandingQuestion[] = Object.freeze([
  {
    id: 'calls_by_tool',
    title: 'Calls per tool, risk level and outcome',
    sql: `SELECT coalesce(tool, '(unknown)') AS tool, coalesce(risk, 'none') AS risk, outcome, count(*) AS calls
FROM calls GROUP BY ALL ORDER BY tool, risk, outcome`,
    chart: { label: ['tool', 'risk', 'outcome'], values: ['calls'] },
  },
  {
    id: 'approvals_by_agent',
    title: 'Approval waits and denials per agent',
    sql: `SELECT coalesce(agent_id, '(unknown)') AS agent_id,
  count(*) AS staged,
  count(decision) AS decided,
  count(*) FILTER (WHERE decision = 'approved') AS approved,
  count(*) FILTER (WHERE decision = 'denied') AS denied,
  count(*) FILTER (WHERE decision = 'expired') AS expired,
  ${pct("count(*) FILTER (WHERE decision = 'denied')", 'count(decision)')} AS denied_pct,
  round(quantile_cont(${waitSeconds}, 0.5), 3) AS wait_p50_s,
  round(quantile_cont(${waitSeconds}, 0.9), 3) AS wait_p90_s,
  round(quantile_cont(${waitSeconds}, 0.99), 3) AS wait_p99_s,
  round(max(${waitSeconds}), 3) AS wait_max_s
FROM calls WHERE staged_at IS NOT NULL GROUP BY ALL ORDER BY agent_id`,
    chart: { label: ['agent_id'], values: ['wait_p50_s', 'wait_p90_s', 'wait_p99_s'] },
  },
  {
    id: 'devices',
    title: 'Outcome unknown and seal rates per device',
    sql: `SELECT coalesce(device_id, '(none)') AS device_id,
  count(*) AS calls,
  count(*) FILTER (WHERE started) AS started,
  count(*) FILTER (WHERE outcome_unknown) AS outcome_unknown,
  ${pct('count(*) FILTER (WHERE outcome_unknown)', 'count(*) FILTER (WHERE started)')} AS outcome_unknown_pct,
  count(*) FILTER (WHERE sealed) AS sealed,
  ${pct('count(*) FILTER (WHERE sealed)', 'count(*)')} AS sealed_pct
FROM calls GROUP BY ALL ORDER BY device_id`,
    chart: { label: ['device_id'], values: ['outcome_unknown_pct', 'sealed_pct'] },
  },
  {
    id: 'refusals',
    title: 'Refused calls by reason',
    sql: `SELECT refused_reason AS reason, count(*) AS calls, count(DISTINCT agent_id) AS agents,
  string_agg(DISTINCT tool, ', ' ORDER BY tool) AS tools
FROM calls WHERE refused_reason IS NOT NULL GROUP BY ALL ORDER BY calls DESC, reason`,
    chart: { label: ['reason'], values: ['calls'] },
  },
  {
    id: 'tokens_by_agent',
    title: 'Model token use per agent',
    sql: `WITH conversation AS (
  SELECT subject, any_value(agent_id) AS agent_id FROM events
  WHERE type = ${quote(ConversationEventType.Started)} GROUP BY subject
), turn AS (
  SELECT subject,
    CAST(json_extract_string(data, '$.usage.input_tokens') AS BIGINT) AS input_tokens,
    CAST(json_extract_string(data, '$.usage.output_tokens') AS BIGINT) AS output_tokens
  FROM events
  WHERE type = ${quote(ConversationEventType.MessageAdded)} AND json_extract_string(data, '$.usage.input_tokens') IS NOT NULL
)
SELECT coalesce(c.agent_id, '(unknown)') AS agent_id,
  count(DISTINCT t.subject) AS conversations,
  count(*) AS model_turns,
  sum(t.input_tokens) AS input_tokens,
  sum(t.output_tokens) AS output_tokens,
  sum(t.input_tokens + t.output_tokens) AS total_tokens
FROM turn t LEFT JOIN conversation c USING (subject)
GROUP BY ALL ORDER BY total_tokens DESC, agent_id`,
    chart: { label: ['agent_id'], values: ['input_tokens', 'output_tokens'] },
  },
]);
