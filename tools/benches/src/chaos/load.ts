/**
 * The chaos run's load: calls submitted to policy across tenants, agents and devices, low risk (a screen read, run at
 * once) and high risk (a message, staged), each retried under its own operation id until policy acknowledges it; and
 * the scripted owner, who approves every staged call as the inbox lists it.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { RpcName, RpcRequestOf, RpcReplyOf } from '@ormuz/contracts';
import { callRpc, type Credential } from '@ormuz/service-kit';

/** A tenant's agents and devices, and a credential acting for it. */
export interface LoadTenant {
  readonly tenant: string;
  readonly agents: readonly string[];
  readonly devices: readonly string[];
  readonly credential: Credential;
}

export interface LoadOptions {
  readonly nc: () => NatsConnection;
  readonly namespace: string;
  readonly tenants: readonly LoadTenant[];
  /** Submits started per second. */
  readonly rate: number;
  /** Share of the calls that are high risk (staged for the owner), 0 to 1. */
  readonly highRiskShare: number;
  readonly random: () => number;
}

const RETRYABLE = new Set(['service_unavailable', 'timeout']);
const MAX_IN_FLIGHT = 32;

/** Submits calls at a steady rate until stopped, and counts what policy acknowledged. */
export class LoadGenerator {
  /** Operation ids sent. */
  submitted = 0;
  /** Call ids policy answered with, and when. */
  readonly acknowledged = new Map<string, number>();
  /** Submits refused with an error other than unavailability, one line each. */
  readonly errors: string[] = [];
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: LoadOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops submitting new calls; resolves once every submit in flight was acknowledged or given up. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  private call<N extends RpcName>(name: N, body: NoInfer<RpcRequestOf<N>>, credential: Credential) {
    return callRpc(this.opts.nc(), this.opts.namespace, name, body, { credential, timeoutMs: 5000 });
  }

  private async run(): Promise<void> {
    const { random, tenants } = this.opts;
    const every = 1000 / this.opts.rate;
    const t0 = Date.now();
    for (let n = 0; !this.stopping.signal.aborted; n++) {
      const wait = t0 + n * every - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (this.inFlight.size >= MAX_IN_FLIGHT) continue;
      const t = tenants[Math.floor(random() * tenants.length)]!;
      const high = random() < this.opts.highRiskShare;
      const submit = this.submit(t, {
        tenant: t.tenant,
        agent_id: t.agents[Math.floor(random() * t.agents.length)]!,
        device_id: t.devices[Math.floor(random() * t.devices.length)]!,
        tool: high ? 'device.send_message' : 'device.screen_observe',
        arguments: high ? { recipient: 'Alice Martin', message_body: `chaos ${n}` } : {},
        origin: { kind: 'operation', operation_id: `chaos-op-${n}` },
      });
      this.inFlight.add(submit);
      void submit.finally(() => this.inFlight.delete(submit));
    }
  }

  /** One operation, sent again (same id, so never a second call) until policy answers; given up 60 s after the stop. */
  private async submit(t: LoadTenant, body: RpcRequestOf<'policy.submit'>): Promise<void> {
    this.submitted++;
    let giveUpAt = Number.POSITIVE_INFINITY;
    for (;;) {
      try {
        const reply: RpcReplyOf<'policy.submit'> = await this.call('policy.submit', body, t.credential);
        this.acknowledged.set(reply.call_id, Date.now());
        return;
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        // A code other than unavailability is an answer; none at all is the transport (NATS down, reconnecting).
        if (code && !RETRYABLE.has(code)) {
          this.errors.push(
            `${body.origin.kind === 'operation' ? body.origin.operation_id : ''}: ${(err as Error).message}`,
          );
          return;
        }
        if (this.stopping.signal.aborted && giveUpAt === Number.POSITIVE_INFINITY) giveUpAt = Date.now() + 60_000;
        if (Date.now() > giveUpAt) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }
}

/** The scripted owner of every tenant: approves each staged call the inbox lists, until stopped. */
export class ScriptedOwner {
  approved = 0;
  private readonly stopping = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly nc: () => NatsConnection,
    private readonly namespace: string,
    private readonly tenants: readonly LoadTenant[],
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping.signal.aborted) {
      for (const t of this.tenants) {
        const ask = { credential: t.credential, timeoutMs: 5000 };
        const pending = await callRpc(this.nc(), this.namespace, 'approvals.list', { tenant: t.tenant }, ask).catch(
          () => ({ approvals: [] }),
        );
        for (const a of pending.approvals) {
          if (this.stopping.signal.aborted) return;
          const body = { tenant: t.tenant, approval_id: a.approval_id };
          if (
            await callRpc(this.nc(), this.namespace, 'approvals.approve', body, ask).then(
              () => true,
              () => false,
            )
          )
            this.approved++;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
