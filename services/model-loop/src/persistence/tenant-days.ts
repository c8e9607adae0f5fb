/**
 * The tenant-day aggregate as the service reaches it: one subject per tenant and UTC day in the `usage` stream,
 * `<ns>.usage.<tenant>.tenant_day.<YYYY-MM-DD>`, changed only through the pure decider with optimistic concurrency
 * (see `AggregateRepository`): every conversation of the tenant claims against it, so two replicas' claims are
 * decided one after the other against the expected sequence (docs/decisions/0036).
 */
import type { TenantDayEventDraft } from '@ormuz/contracts';
import { AggregateRepository, type EventStore } from '@ormuz/event-log';
import { tenantDayDecider, type TenantDayCommand, type TenantDayState } from '../domain/tenant-day.js';

/**
 * Attempts of one claim against a contended day before the step fails (and is retried by its reaction): every
 * conversation of a tenant appends to the same subject, so more than the default.
 */
const CLAIM_ATTEMPTS = 25;

export class TenantDays extends AggregateRepository<TenantDayState, TenantDayCommand, TenantDayEventDraft> {
  constructor(store: EventStore, namespace: string, source = '/ormuz/model-loop') {
    super(store, namespace, source, { context: 'usage', decider: tenantDayDecider, maxAttempts: CLAIM_ATTEMPTS });
  }
}
