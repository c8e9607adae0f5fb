import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';
import { EMPTY_CHAIN, type ChainHead, type StoredLink } from '../domain/archive-chain.js';
import type { AuditDB } from './audit.tables.js';
import { AUDIT_SCHEMA } from './migrations.js';

/** Reads of one tenant's hash chain, in chain order, for verification. */
@Injectable()
export class ArchiveChainRepository {
  private readonly db: Kysely<AuditDB>;

  constructor(@Inject(INFRA) infra: Infrastructure) {
    this.db = (infra.db as Kysely<AuditDB>).withSchema(AUDIT_SCHEMA);
  }

  /** Up to `limit` archived events of the tenant after chain position `after`, by position. */
  linksAfter(tenant: string, after: number, limit: number): Promise<StoredLink[]> {
    return this.db
      .selectFrom('events')
      .select(['tenant', 'chain_pos', 'stream', 'seq', 'idx', 'id', 'type', 'subject', 'time', 'source'])
      .select(['correlation_id', 'causation_id', 'schema_version', 'data', 'data_sha256', 'erasable_field'])
      .select(['erasable_sha256', 'prev_hash', 'row_hash', 'erased_at'])
      .where('tenant', '=', tenant)
      .where('chain_pos', '>', after)
      .orderBy('chain_pos')
      .limit(limit)
      .execute();
  }

  /** The tenant's recorded chain head (the empty chain when the tenant has nothing archived). */
  async head(tenant: string): Promise<ChainHead> {
    const row = await this.db
      .selectFrom('chain_heads')
      .select(['position', 'hash'])
      .where('tenant', '=', tenant)
      .executeTakeFirst();
    return row ?? EMPTY_CHAIN;
  }
}
