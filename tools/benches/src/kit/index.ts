/**
 * @packageDocumentation
 * The harness the benchmark scripts share: latency summaries, number formatting, the results table and its
 * `--json` line, progress lines on stderr, command-line options, bounded teardown steps, the SIGINT/SIGTERM and
 * watchdog cleanup, and the throwaway Postgres database a run creates and drops. What a bench measures stays in the
 * bench.
 */

/** Clock, sleep, percentiles and latency summaries. */
export { now, pct, sleep, summarize, type LatencySummary } from './stats.js';
/** Number formatting for the table. */
export { fmt, fmtRate, fmtUs } from './format.js';
/** The report: stdout lines, stderr progress, the results table, the verdict line and the `--json` line. */
export {
  errorRow,
  log,
  printJson,
  printRunReport,
  printTable,
  printVerdicts,
  progress,
  type BenchRow,
  type RunHead,
} from './report.js';
/** Command line, environment, and cleanup that always finishes. */
export { bounded, cleanUpOnSignals, flag, natsUrl, option, positiveOption, startWatchdog } from './run.js';
/** The database a run creates through an admin connection and drops at the end. */
export { adminDbUrl, adminQuery, benchDbName, createDatabase, databaseUrl, dropDatabase } from './postgres.js';
/** The raw hops of a floor: request/reply, publish-acks, deliveries, WebSocket round trips. */
export {
  echoResponder,
  jetStreamDeliveries,
  publishAckChains,
  requestReplyRoundTrips,
  webSocketEchoServer,
  webSocketRoundTrips,
} from './floor.js';
/** Child processes a bench forks and asks over IPC, and waiting for a condition. */
export { forkChild, until, type AskChild } from './child.js';
/** A run of the platform's services as processes: its namespace, database, children and their teardown. */
export { PlatformRun } from './platform-run.js';
/** The platform's services as processes of their own. */
export { freePort, startServiceProcess, type ServiceProcess } from './services.js';
/** CPU time from /proc: processes, the NATS server, a database's backends, the machine. */
export { machineCpuMs, natsServerPid, procCpuMs, startCpuMeter, type CpuUsed } from './cpu.js';
