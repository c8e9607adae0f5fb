import { Inject, Injectable } from '@nestjs/common';
import { aggregateSubject } from '@ormuz/contracts';
import { INFRA, type Infrastructure } from '@ormuz/service-kit';

/** A watch on one call's subject: resolves `changed` at the next append to it, or at the bound. */
export interface CallWatch {
  /** Waits until the call's next append is heard, `ms` pass or `signal` aborts, whichever is first. */
  changed(ms: number, signal?: AbortSignal): Promise<void>;
  close(): void;
}

/**
 * Hears the appends to a call the gateway waits on: the calls stream's messages are published on the call's subject
 * (`<ns>.calls.<tenant>.call.<id>`), so a core NATS subscription to it is told of each one as it is stored, and the
 * gateway reads the status at once instead of at its next poll. Core NATS is at most once (a reconnect loses what was
 * sent meanwhile), so a waiter still reads the status at a bound (`MCP_CALL_POLL_MS`): a missed append costs time,
 * never the outcome. The subscription is made before the first status read, so no append falls between the two.
 */
@Injectable()
export class CallAppends {
  constructor(@Inject(INFRA) private readonly infra: Infrastructure) {}

  watch(tenant: string, callId: string): CallWatch {
    let heard = 0;
    let wake: (() => void) | undefined;
    const subscription = this.infra.nc.subscribe(
      aggregateSubject(this.infra.config.namespace, 'calls', tenant, callId),
      {
        callback: () => {
          heard++;
          wake?.();
        },
      },
    );
    let seen = 0;
    return {
      changed: (ms, signal) =>
        new Promise<void>((resolve) => {
          if (heard > seen || signal?.aborted) {
            seen = heard;
            return resolve();
          }
          const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            wake = undefined;
            seen = heard;
            resolve();
          };
          const timer = setTimeout(done, ms);
          signal?.addEventListener('abort', done, { once: true });
          wake = done;
        }),
      close: () => subscription.unsubscribe(),
    };
  }
}
