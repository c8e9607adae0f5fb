/**
 * The NATS authorization the platform ships (infra/nats/authorization.conf), on a nats-server of the test's own: no
 * client gets in without its user's password, each service user can do its work (declare its streams, serve its
 * commands, append to its contexts, run its own consumers), and whatever a user publishes outside its permissions is
 * refused by the server (the client is told, with a permissions violation) and reaches no subscriber and no stream.
 */
import { Module } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AckPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  aggregateSubject,
  commandSubject,
  contextFilter,
  DeviceEventType,
  envelope,
  internalCommandSubject,
  liveConversationSubject,
  type ContextName,
  AUDIT_EXPORT_MAX_BYTES,
  AUDIT_EXPORT_PART_BYTES,
} from '@ormuz/contracts';
import { connectNats, NatsAuthorizationError, streamName } from '@ormuz/event-log';
import {
  authorizeSeededCall,
  createTestDatabase,
  randomNamespace,
  startAuthorizedNatsServer,
  waitFor,
  type NatsServerHandle,
  type TestDatabase,
} from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import { pino } from 'pino';
import {
  loadBaseConfig,
  NatsRpcServer,
  startService,
  StreamedReply,
  streamRpc,
  ToolCalls,
  waitUntilServing,
  type RunningService,
} from '../src/index.js';

/** The streams each service declares at start, as its main.ts does. */
const SERVICES = {
  policy: ['calls'],
  approvals: ['calls'],
  'device-bridge': ['calls', 'devices'],
  'model-loop': ['conversations', 'usage', 'calls'],
  audit: ['calls', 'conversations', 'devices', 'usage'],
  'mcp-gateway': [],
} as const satisfies Record<string, readonly ContextName[]>;
type Service = keyof typeof SERVICES;
type User = Service | 'cli';

/** The passwords of this run's server, fresh for each user. */
let PASSWORDS: Readonly<Record<User, string>>;

@Module({})
class ProbeModule {}

/** A client connected as `user`, with every permissions violation the server reported to it. */
interface Client {
  readonly nc: NatsConnection;
  readonly violations: { operation: string; subject: string }[];
}

function watch(nc: NatsConnection): Client['violations'] {
  const violations: Client['violations'] = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'error' && s.error.name === 'PermissionViolationError') {
        const { operation, subject } = s.error as unknown as { operation: string; subject: string };
        violations.push({ operation, subject });
      }
    }
  })();
  return violations;
}

describe('NATS authorization (infra/nats/authorization.conf)', () => {
  let server: NatsServerHandle;
  let database: TestDatabase;
  const namespace = randomNamespace('auth');
  const running = new Map<Service, RunningService>();
  const serviceViolations = new Map<Service, Client['violations']>();
  const clients: NatsConnection[] = [];
  const tenant = 'acme';

  const connectAs = async (user: User, password = PASSWORDS[user]): Promise<Client> => {
    const nc = await connectNats({ url: server.url, name: `test-${user}`, user, password });
    clients.push(nc);
    return { nc, violations: watch(nc) };
  };
  const svc = (service: Service) => running.get(service)!;

  /** The number of messages in a context's stream, read as device-bridge (which may read every stream's info). */
  const messagesIn = async (context: ContextName) =>
    (await svc('device-bridge').infra.jsm.streams.info(streamName(namespace, context))).state.messages;

  /** Publishes on core NATS and waits for the server to refuse it, by name, to this client. */
  const refusedPublish = async (client: Client, subject: string) => {
    client.nc.publish(subject, JSON.stringify({ forged: true }));
    await waitFor(() => client.violations.some((v) => v.operation === 'publish' && v.subject === subject), {
      message: `the server to refuse the publish to ${subject}`,
    });
  };

  /** Subscribes and waits for the server to refuse the subscription. */
  const refusedSubscription = async (client: Client, subject: string) => {
    const sub = client.nc.subscribe(subject);
    await expect(sub.closed).resolves.toMatchObject({ name: 'PermissionViolationError' });
    await waitFor(() => client.violations.some((v) => v.operation === 'subscription' && v.subject === subject), {
      message: `the server to refuse the subscription to ${subject}`,
    });
  };

  const deviceEvent = (deviceId: string) =>
    envelope<string, unknown>(
      {
        type: DeviceEventType.CredentialIssued,
        data: { device_id: deviceId, credential_id: `cred-${randomUUID()}`, via: 'issue', expires_at: null },
      },
      {
        source: '/test/forger',
        tenant,
        subject: deviceId,
        correlationid: deviceId,
        causationid: randomUUID(),
        time: new Date(),
      },
    );

  const submitAndAuthorize = async (calls: ToolCalls, operation: string) => {
    const origin = { kind: 'operation', operation_id: operation } as const;
    const callId = deriveCallId(tenant, origin);
    await authorizeSeededCall(calls, { tenant, callId, tool: 'device.screen_observe', origin });
    return callId;
  };

  beforeAll(async () => {
    ({ server, passwords: PASSWORDS } = await startAuthorizedNatsServer([
      ...(Object.keys(SERVICES) as Service[]),
      'cli',
    ]));
    database = await createTestDatabase();
    // Each service opens its infrastructure as its own user (streams, migrations, its command subscriptions) and
    // serves `health` and `consumers.*`, exactly as at a real start; only the Nest module is a probe.
    for (const service of Object.keys(SERVICES) as Service[]) {
      const started = await startService({
        service,
        config: loadBaseConfig({
          NATS_URL: server.url,
          NATS_USER: service,
          NATS_PASSWORD: PASSWORDS[service],
          DATABASE_URL: database.url,
          ORMUZ_NAMESPACE: namespace,
          LOG_LEVEL: 'silent',
        }),
        streams: SERVICES[service],
        schema: `probe_${service.replaceAll('-', '_')}`,
        migrations: {},
        module: () => ({ module: ProbeModule }),
      });
      running.set(service, started);
      serviceViolations.set(service, watch(started.infra.nc));
    }
  });

  afterAll(async () => {
    for (const nc of clients) await nc.close().catch(() => undefined);
    for (const s of running.values()) await s.close();
    await database?.drop();
    await server?.stop();
  });

  describe('who may connect', () => {
    it('refuses a client without credentials, saying how to give them', async () => {
      const err = await connectNats({ url: server.url, name: 'test-anonymous' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NatsAuthorizationError);
      expect((err as Error).message).toMatch(/refused a connection without credentials .*Authorization Violation/);
      expect((err as Error).message).toContain('NATS_USER and NATS_PASSWORD');
    });

    it("refuses a wrong password, and one user's password for another user", async () => {
      await expect(connectAs('policy', 'not-the-password')).rejects.toThrow(
        /refused user policy \(Authorization Violation\)/,
      );
      await expect(connectAs('device-bridge', PASSWORDS.approvals)).rejects.toBeInstanceOf(NatsAuthorizationError);
      await expect(connectAs('admin' as User, PASSWORDS.cli)).rejects.toBeInstanceOf(NatsAuthorizationError);
    });
  });

  describe('what each service does is allowed', () => {
    it('every service declared its streams and answers its health command to the CLI user', async () => {
      const cli = await connectAs('cli');
      for (const service of Object.keys(SERVICES) as Service[]) {
        await expect(waitUntilServing(cli.nc, namespace, service, { timeoutMs: 5000 })).resolves.toMatchObject({
          service,
        });
      }
      for (const context of ['calls', 'conversations', 'devices', 'usage'] as const) {
        await expect(svc('policy').infra.jsm.streams.info(streamName(namespace, context))).resolves.toBeDefined();
      }
      expect(cli.violations).toEqual([]);
    });

    it('policy appends call decisions and reads them back; approvals, the bridge and model-loop append to calls', async () => {
      const policyCalls = new ToolCalls(svc('policy').infra.store, namespace, '/ormuz/policy');
      const callId = await submitAndAuthorize(policyCalls, `op-${randomUUID()}`);
      // A cold load reads the call back with direct gets, as policy's `status` does.
      svc('policy').infra.store.forget(aggregateSubject(namespace, 'calls', tenant, callId));
      const { state } = await policyCalls.load(tenant, callId);
      expect(state.status).toBe('authorized');
      for (const writer of ['approvals', 'device-bridge', 'model-loop'] as const) {
        const calls = new ToolCalls(svc(writer).infra.store, namespace, `/ormuz/${writer}`);
        await expect(submitAndAuthorize(calls, `op-${writer}-${randomUUID()}`)).resolves.toMatch(/^call_/);
      }
    });

    it('the bridge records device facts and reads them back', async () => {
      const subject = aggregateSubject(namespace, 'devices', tenant, 'phone-1');
      await svc('device-bridge').infra.store.record(subject, deviceEvent('phone-1'));
      const history = await svc('device-bridge').infra.store.history(streamName(namespace, 'devices'), subject);
      expect(history).toHaveLength(1);
    });

    it('a service creates, pulls from, acknowledges and deletes its own consumer', async () => {
      const { jsm, js } = svc('approvals').infra;
      const stream = streamName(namespace, 'calls');
      await jsm.consumers.add(stream, {
        durable_name: 'approvals_inbox',
        ack_policy: AckPolicy.All,
        filter_subject: contextFilter(namespace, 'calls'),
      });
      const consumer = await js.consumers.get(stream, 'approvals_inbox');
      const first = await consumer.next({ expires: 5000 });
      expect(first?.subject).toMatch(new RegExp(`^${namespace}\\.calls\\.${tenant}\\.call\\.`));
      await first!.ackAck();
      await expect(jsm.consumers.info(stream, 'approvals_inbox')).resolves.toMatchObject({ num_ack_pending: 0 });
      await jsm.consumers.delete(stream, 'approvals_inbox');
    });

    it('model-loop and the MCP gateway reach policy on the internal subjects, which only services may publish', async () => {
      const subject = internalCommandSubject(namespace, 'policy', 'probe');
      const sub = svc('policy').infra.nc.subscribe(subject, {
        callback: (_err, msg) => void msg.respond(JSON.stringify({ ok: true, data: { heard: msg.string() } })),
      });
      await svc('policy').infra.nc.flush();
      for (const asker of ['model-loop', 'mcp-gateway'] as const) {
        const reply = await svc(asker).infra.nc.request(subject, `from ${asker}`, { timeout: 5000 });
        expect(reply.json()).toEqual({ ok: true, data: { heard: `from ${asker}` } });
      }
      sub.unsubscribe();
    });

    it("model-loop publishes a conversation's live text and the CLI user hears it, of every tenant", async () => {
      const cli = await connectAs('cli');
      const heard: string[] = [];
      cli.nc.subscribe(liveConversationSubject(namespace, tenant, 'conv_live'), {
        callback: (_err, msg) => void heard.push(msg.string()),
      });
      // One user serves every tenant's CLI, so NATS cannot keep it to one tenant's live text (infra/README.md).
      cli.nc.subscribe(`${namespace}.live.*.conversations.*`, {
        callback: (_err, msg) => void heard.push(msg.subject),
      });
      await cli.nc.flush();
      const loop = svc('model-loop').infra.nc;
      loop.publish(liveConversationSubject(namespace, tenant, 'conv_live'), 'Hel');
      loop.publish(liveConversationSubject(namespace, 'globex', 'conv_other'), 'lo');
      await loop.flush();
      await waitFor(() => heard.length === 3, { message: 'the CLI to hear the live text' });
      expect(heard.sort()).toEqual(
        [
          'Hel',
          liveConversationSubject(namespace, tenant, 'conv_live'),
          liveConversationSubject(namespace, 'globex', 'conv_other'),
        ].sort(),
      );
      expect(cli.violations).toEqual([]);
    });

    it('audit answers an export in parts, which the CLI user reads whole', async () => {
      const cli = await connectAs('cli');
      const audit = svc('audit').infra;
      const server = new NatsRpcServer(audit.nc, namespace, 'audit', pino({ level: 'silent' }), audit.authenticator);
      // As many parts as an 8 MiB request of 512 KiB parts can take, with a lone large event among them.
      const parts = 2 * (AUDIT_EXPORT_MAX_BYTES / AUDIT_EXPORT_PART_BYTES) + 1;
      server.addHandler('export', async () =>
        StreamedReply.of(
          (async function* () {
            for (let i = 1; i <= parts; i++) yield { body: new TextEncoder().encode(`${i}\n`) };
            return { count: parts, next: null, high_seq: parts };
          })(),
        ),
      );
      await new Promise<void>((resolve) => server.listen(resolve));
      await audit.nc.flush();
      try {
        const received: string[] = [];
        const reply = streamRpc(cli.nc, namespace, 'audit.export', { tenant, context: 'calls' });
        for (let next = await reply.next(); ; next = await reply.next()) {
          if (next.done) {
            expect(next.value).toEqual({ count: parts, next: null, high_seq: parts });
            break;
          }
          received.push(new TextDecoder().decode(next.value.body));
        }
        expect(received).toEqual(Array.from({ length: parts }, (_, i) => `${i + 1}\n`));
        expect(cli.violations).toEqual([]);
      } finally {
        server.close();
      }
    });

    it('no service was refused anything while doing its work', () => {
      for (const [service, violations] of serviceViolations)
        expect({ service, violations }).toEqual({ service, violations: [] });
    });
  });

  describe('what a user publishes outside its permissions is refused and reaches nobody', () => {
    let observer: NatsConnection;
    const heard: string[] = [];

    beforeAll(async () => {
      // Policy listens on its internal subjects and device-bridge on its links: a forged message there would be heard.
      observer = svc('policy').infra.nc;
      observer.subscribe(`${namespace}.int.policy.>`, { callback: (_err, msg) => void heard.push(msg.subject) });
      svc('device-bridge').infra.nc.subscribe(`${namespace}.bridge.link.>`, {
        callback: (_err, msg) => void heard.push(msg.subject),
      });
      await observer.flush();
      await svc('device-bridge').infra.nc.flush();
    });

    /** After the refusal reached the publisher, anything the server had routed is in the observers' buffers. */
    const nothingHeard = async () => {
      await observer.flush();
      await svc('device-bridge').infra.nc.flush();
      expect(heard).toEqual([]);
    };

    it('the CLI user may send a command, and nothing else: no call event, no internal command, no device fact', async () => {
      const cli = await connectAs('cli');
      await expect(waitUntilServing(cli.nc, namespace, 'policy', { timeoutMs: 5000 })).resolves.toBeDefined();
      const before = { calls: await messagesIn('calls'), devices: await messagesIn('devices') };

      await refusedPublish(cli, aggregateSubject(namespace, 'calls', tenant, 'call_forged'));
      await refusedPublish(cli, internalCommandSubject(namespace, 'policy', 'submit'));
      await refusedPublish(cli, aggregateSubject(namespace, 'devices', tenant, 'phone-1'));
      await refusedPublish(cli, `${namespace}.bridge.link.${tenant}.phone-1`);
      await refusedPublish(cli, `$JS.API.STREAM.DELETE.${streamName(namespace, 'calls')}`);
      await nothingHeard();
      expect({ calls: await messagesIn('calls'), devices: await messagesIn('devices') }).toEqual(before);

      // Nor may it read the log, or anybody else's replies.
      await expect(jetstreamManager(cli.nc)).rejects.toThrow(/Permissions Violation for Publish to "\$JS\.API\.INFO"/);
      await refusedSubscription(cli, '_INBOX.>');
      await refusedSubscription(cli, '_INBOX.policy.>');
      await refusedSubscription(cli, `${namespace}.calls.>`);
      await refusedSubscription(cli, `${namespace}.cmd.policy.>`);
    });

    it('only model-loop may publish live text, and no other service may hear it', async () => {
      const subject = liveConversationSubject(namespace, tenant, 'conv_forged');
      const listener = await connectAs('cli');
      const heardLive: string[] = [];
      listener.nc.subscribe(subject, { callback: (_err, msg) => void heardLive.push(msg.string()) });
      await listener.nc.flush();
      await refusedPublish(await connectAs('cli'), subject);
      for (const service of ['policy', 'approvals', 'device-bridge', 'audit', 'mcp-gateway'] as const) {
        await refusedPublish({ nc: svc(service).infra.nc, violations: serviceViolations.get(service)! }, subject);
      }
      await listener.nc.flush();
      expect(heardLive).toEqual([]);
      for (const service of ['audit', 'mcp-gateway', 'policy'] as const) {
        await refusedSubscription(
          { nc: svc(service).infra.nc, violations: serviceViolations.get(service)! },
          `${namespace}.live.>`,
        );
      }
    });

    it('only the bridge may record device facts: every other service is refused, and the stream holds none of theirs', async () => {
      const before = await messagesIn('devices');
      for (const service of ['policy', 'approvals', 'model-loop', 'audit'] as const) {
        const subject = aggregateSubject(namespace, 'devices', tenant, `phone-by-${service}`);
        await expect(svc(service).infra.store.record(subject, deviceEvent(`phone-by-${service}`))).rejects.toThrow(
          `Permissions Violation for Publish to "${subject}"`,
        );
        await expect(
          svc('device-bridge').infra.store.history(streamName(namespace, 'devices'), subject),
        ).resolves.toEqual([]);
      }
      expect(await messagesIn('devices')).toBe(before);
    });

    it('audit appends to no stream, and only model-loop to conversations', async () => {
      const auditCalls = new ToolCalls(svc('audit').infra.store, namespace, '/ormuz/audit');
      const before = await messagesIn('calls');
      await expect(submitAndAuthorize(auditCalls, `op-audit-${randomUUID()}`)).rejects.toThrow(
        /Permissions Violation for Publish to ".*\.calls\./,
      );
      expect(await messagesIn('calls')).toBe(before);
      const approvals = { nc: svc('approvals').infra.nc, violations: serviceViolations.get('approvals')! };
      await refusedPublish(approvals, aggregateSubject(namespace, 'conversations', tenant, 'conv_forged'));
    });

    it('only model-loop sends internal commands, and only to policy; only the bridge uses bridge links', async () => {
      const approvals = { nc: svc('approvals').infra.nc, violations: serviceViolations.get('approvals')! };
      const audit = { nc: svc('audit').infra.nc, violations: serviceViolations.get('audit')! };
      const modelLoop = { nc: svc('model-loop').infra.nc, violations: serviceViolations.get('model-loop')! };
      await refusedPublish(approvals, internalCommandSubject(namespace, 'policy', 'submit'));
      await refusedPublish(audit, internalCommandSubject(namespace, 'policy', 'submit'));
      await refusedPublish(modelLoop, `${namespace}.bridge.link.${tenant}.phone-1`);
      await refusedPublish(modelLoop, internalCommandSubject(namespace, 'approvals', 'decide'));
      await nothingHeard();
    });

    it("a service may not create another service's consumer, nor its own on a context it does not read", async () => {
      // Model-loop: approvals, as the HTTP edge, reads any tenant's events with consumers of its own.
      const { jsm } = svc('model-loop').infra;
      const stream = streamName(namespace, 'calls');
      await expect(
        jsm.consumers.add(stream, {
          durable_name: 'policy_call_status',
          ack_policy: AckPolicy.All,
          filter_subject: contextFilter(namespace, 'calls'),
        }),
      ).rejects.toThrow(/Permissions Violation for Publish to "\$JS\.API\.CONSUMER\.CREATE\..*policy_call_status/);
      await expect(
        jsm.consumers.add(streamName(namespace, 'devices'), {
          durable_name: 'model_loop_conversations',
          ack_policy: AckPolicy.All,
          filter_subject: contextFilter(namespace, 'devices'),
        }),
      ).rejects.toThrow(/Permissions Violation/);
    });

    it("a service may not answer another service's commands, read its replies, or delete a stream", async () => {
      const approvals = { nc: svc('approvals').infra.nc, violations: serviceViolations.get('approvals')! };
      await refusedSubscription(approvals, commandSubject(namespace, 'policy', 'submit'));
      await refusedSubscription(approvals, '_INBOX.policy.>');
      await refusedSubscription(approvals, `${namespace}.bridge.link.>`);
      const jsm: JetStreamManager = svc('policy').infra.jsm;
      await expect(jsm.streams.delete(streamName(namespace, 'calls'))).rejects.toThrow(/Permissions Violation/);
      await expect(jsm.streams.purge(streamName(namespace, 'calls'))).rejects.toThrow(/Permissions Violation/);
      await expect(jsm.streams.info(streamName(namespace, 'calls'))).resolves.toBeDefined();
    });
  });
});
