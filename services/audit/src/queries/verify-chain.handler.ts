import { Query, QueryHandler, type IQueryHandler } from '@nestjs/cqrs';
import {
  AUDIT_VERIFY_DEFAULT_LIMIT,
  type AuditVerifyReplyV1,
  type AuditVerifyRequestV1,
  type BrokenLinkV1,
} from '@ormuz/contracts';
import { checkLink, EMPTY_CHAIN, type ChainHead } from '../domain/archive-chain.js';
import { ArchiveChainRepository } from '../persistence/archive-chain.repository.js';

/** Rows read from Postgres at once: what bounds memory, whatever the request's limit. */
const READ_PAGE = 500;

export class VerifyChainQuery extends Query<AuditVerifyReplyV1> {
  constructor(readonly request: AuditVerifyRequestV1) {
    super();
  }
}

/**
 * Re-computes a stretch of a tenant's hash chain from the stored rows: each row must sit at the next position, point at
 * the link before it, have data matching its hashes, and hash to its stored link. Stops at the first broken link.
 * Reaching the end of the chain, it checks that the chain ends where the recorded head says (a row deleted from the
 * end, or one appended behind the archive's back).
 */
@QueryHandler(VerifyChainQuery)
export class VerifyChainHandler implements IQueryHandler<VerifyChainQuery> {
  constructor(private readonly chain: ArchiveChainRepository) {}

  async execute({ request }: VerifyChainQuery): Promise<AuditVerifyReplyV1> {
    const { tenant } = request;
    const limit = request.limit ?? AUDIT_VERIFY_DEFAULT_LIMIT;
    let last: ChainHead = request.after ?? EMPTY_CHAIN;
    let checked = 0;
    const reply = (next: ChainHead | null, broken: BrokenLinkV1 | null): AuditVerifyReplyV1 => ({
      tenant,
      checked,
      last,
      next,
      broken,
    });
    while (checked < limit) {
      const rows = await this.chain.linksAfter(tenant, last.position, Math.min(READ_PAGE, limit - checked));
      for (const row of rows) {
        const broken = checkLink(row, last);
        if (broken) return reply(null, broken);
        last = { position: row.chain_pos, hash: row.row_hash };
        checked++;
      }
      if (rows.length === 0) {
        const head = await this.chain.head(tenant);
        if (head.position === last.position && head.hash === last.hash) return reply(null, null);
        return reply(null, await this.headMismatch(tenant, head, last));
      }
    }
    return reply(last, null);
  }

  /**
   * The chain verified up to `last` but the recorded head says otherwise: rows beyond the head were added behind the
   * archive's back, rows at the end were removed, or the last row is another than the head recorded.
   */
  private async headMismatch(tenant: string, head: ChainHead, last: ChainHead): Promise<BrokenLinkV1> {
    const position = Math.min(head.position + 1, last.position + 1, Math.max(head.position, last.position));
    const [row] = await this.chain.linksAfter(tenant, position - 1, 1);
    return {
      position,
      event_id: row?.id ?? '',
      reason: 'head',
      expected: `${head.position}:${head.hash}`,
      found: `${last.position}:${last.hash}`,
    };
  }
}
