/**
 * One owner's live view of the inbox, as server-sent events: first a `snapshot` (every pending approval and the most
 * recently closed ones), then an `approval` event with the approval's current row whenever one is staged or closed,
 * and a comment now and then so proxies keep the connection open. Rows are read as the caller may see them (an owner
 * of named agents gets only theirs) and one at a time, in the order notices arrive, so a page never receives an
 * approval older than one it already has. When the caller's credential stops being valid (CredentialWatch) the
 * stream says so (`end`) and closes: a stream does not outlive the credential that opened it.
 */
import type { ApprovalViewV1 } from '@ormuz/contracts';
import type { Infrastructure } from '@ormuz/service-kit';
import { toView, type InboxRepository, type InboxRow } from '../persistence/inbox.repository.js';
import type { CredentialEnd } from './credential-watch.js';
import type { InboxNotices } from './inbox-notices.js';

/** Where the events go: the HTTP response. */
export interface EventSink {
  write(chunk: string): unknown;
  end(): unknown;
}

export interface ApprovalStreamOptions {
  readonly tenant: string;
  /** An owner of named agents sees only their approvals; undefined: every approval of the tenant. */
  readonly agents: readonly string[] | undefined;
  readonly heartbeatMs: number;
  /** How many closed approvals the snapshot carries. */
  readonly historyLimit: number;
}

/** The snapshot event's data. */
export interface ApprovalSnapshot {
  readonly approvals: ApprovalViewV1[];
}

export class ApprovalStream {
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly closeListeners: (() => void)[] = [];

  constructor(
    private readonly sink: EventSink,
    private readonly inbox: InboxRepository,
    private readonly notices: InboxNotices,
    private readonly options: ApprovalStreamOptions,
    private readonly logger: Infrastructure['logger'],
  ) {}

  /** Starts listening, then sends the snapshot: a change committed in between is sent after it, read afresh. */
  open(): void {
    const { tenant } = this.options;
    this.unsubscribe = this.notices.subscribe(tenant, (approvalId) => this.enqueue(() => this.sendChanged(approvalId)));
    this.enqueue(async () => {
      await this.notices.flush();
      await this.sendSnapshot();
    });
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), this.options.heartbeatMs);
  }

  /** The caller's credential stopped being valid: tells the page why (it signs in again), then closes. */
  end(why: CredentialEnd): void {
    this.send('end', why);
    this.close();
  }

  /** Ends the stream (the page went away, the credential ended, the service is stopping). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    clearInterval(this.heartbeat);
    this.sink.end();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  private enqueue(job: () => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (this.closed) return;
      try {
        await job();
      } catch (err) {
        // The page would silently miss a change: end the stream instead; the page reconnects and gets a snapshot.
        this.logger.warn({ err: (err as Error).message, tenant: this.options.tenant }, 'approval stream ended');
        this.close();
      }
    });
  }

  private async sendSnapshot(): Promise<void> {
    const { tenant, agents, historyLimit } = this.options;
    const [pending, closed] = await Promise.all([
      this.inbox.list(tenant, 'pending', agents),
      this.inbox.recent(tenant, agents, historyLimit),
    ]);
    const snapshot: ApprovalSnapshot = { approvals: [...pending, ...closed].map(toView) };
    this.send('snapshot', snapshot);
  }

  private async sendChanged(approvalId: string): Promise<void> {
    const row = await this.inbox.find(this.options.tenant, approvalId);
    if (row && this.visible(row)) this.send('approval', toView(row));
  }

  private visible(row: InboxRow): boolean {
    const { agents } = this.options;
    return agents === undefined || (row.agent_id !== null && agents.includes(row.agent_id));
  }

  private send(event: string, data: unknown): void {
    // JSON text has no raw newline, so the data is one `data:` line.
    this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private write(chunk: string): void {
    if (!this.closed) this.sink.write(chunk);
  }
}
