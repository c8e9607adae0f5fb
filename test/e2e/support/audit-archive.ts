/**
 * The audit archive on a private nats-server (so a test may restart it) and a fresh database, audit running in the
 * test's process: what the e2e tests of the analyst's commands read through the CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { pino } from 'pino';
import { connectNats } from '@ormuz/event-log';
import { startService, waitUntilServing, type RunningService } from '@ormuz/service-kit';
import { createTestDatabase, freePort, type TestDatabase } from '@ormuz/testing';
import { auditService, loadAuditConfig } from '../../../services/audit/src/index.js';
import { killAll, NatsServerProcess } from './processes.js';
import { waitForArchive } from './wait-for-archive.js';

export class AuditArchive {
  private constructor(
    readonly ns: string,
    readonly nats: NatsServerProcess,
    readonly nc: NatsConnection,
    private readonly database: TestDatabase,
    private readonly audit: RunningService,
  ) {}

  static async start(ns: string): Promise<AuditArchive> {
    const nats = new NatsServerProcess(await freePort(), mkdtempSync(join(tmpdir(), `ormuz-${ns}-nats-`)));
    await nats.start();
    const nc = await connectNats({ url: nats.url, name: `${ns}-test` });
    const database = await createTestDatabase();
    const config = loadAuditConfig({ NATS_URL: nats.url, DATABASE_URL: database.url, ORMUZ_NAMESPACE: ns });
    const audit = await startService({ ...auditService(config), logger: pino({ level: 'warn' }) });
    await waitUntilServing(nc, ns, 'audit');
    return new AuditArchive(ns, nats, nc, database, audit);
  }

  /** Waits until every archive projection has read its stream to the end, none parked. */
  caughtUp(): Promise<void> {
    return waitForArchive(this.nc, this.ns, { only: 'archives' });
  }

  /** Stops the CLI processes, audit, NATS, and drops the database. */
  async stop(): Promise<void> {
    await killAll();
    await this.audit.close();
    await this.nc.close();
    await this.nats.kill();
    await this.database.drop();
    rmSync(this.nats.storeDir, { recursive: true, force: true });
  }
}
