import type { NatsConnection } from '@nats-io/transport-node';
import { commandSubject, SchemaViolationError } from '@ormuz/contracts';
import { connectNats } from '@ormuz/event-log';
import { randomNamespace, testEnv, adminFor, waitFor } from '@ormuz/testing';
import { deriveCallId } from '@ormuz/tool-call';
import {
  callRpc,
  callService,
  type CallServiceOptions,
  RemoteError,
  ServiceUnavailableError,
  submitUnansweredHint,
  waitUntilServing,
} from '../src/index.js';

describe('callService when the answer does not come', () => {
  let nc: NatsConnection;
  const namespace = randomNamespace('rpc');
  const request = { tenant: 'acme', origin: { kind: 'operation' as const, operation_id: 'op-lost-1' } };
  const callId = deriveCallId('acme', request.origin);
  const hint = submitUnansweredHint(request);
  const submit = (options: CallServiceOptions) =>
    adminFor(request)
      .then((credential) => callService(nc, namespace, 'policy', 'submit', request, { ...options, credential }))
      .then(
        () => {
          throw new Error('expected no answer');
        },
        (err: unknown) => err as Error,
      );

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'rpc-test' });
  });
  afterAll(async () => {
    await nc.drain();
  });

  it('derives the hint from the origin exactly as policy derives the call id', () => {
    expect(hint.what).toBe(`call ${callId}`);
    expect(hint.check).toBe(
      `Find out with \`ormuz call status --tenant acme --call ${callId}\`, or resubmit with the same operation id ` +
        `(op-lost-1): it observes the original and never runs the call twice.`,
    );
    // An origin policy would refuse gives a hint without an id rather than an exception.
    expect(submitUnansweredHint({ tenant: 'acme', origin: { kind: 'operation', operation_id: 'a.b>' } }).what).toBe(
      'the call',
    );
  });

  it('says a submit that timed out may have been recorded, and how to find out', async () => {
    // An instance that receives the command and never answers: the reply is lost after the command was taken.
    const received: string[] = [];
    const silent = nc.subscribe(commandSubject(namespace, 'policy', 'submit'), {
      callback: (_e, m) => void received.push(m.string()),
    });
    // The server knows the subscription once it answers a ping: the submit below cannot find no responders.
    await nc.flush();
    try {
      const err = await submit({ timeoutMs: 200, ifUnanswered: hint });
      expect(err).toBeInstanceOf(ServiceUnavailableError);
      expect(err).toMatchObject({ code: 'service_unavailable', noAnswer: 'timeout' });
      expect(err.message).toContain(
        `call ${callId} may have been recorded, and may even have run; the outcome is unknown`,
      );
      expect(err.message).toContain(hint.check);
      expect(err.message).toContain('no reply within 200 ms');
      // Delivered before the timeout, though a busy event loop may run the timer first.
      await waitFor(() => received.length === 1, { message: 'the silent instance to receive the submit' });
    } finally {
      silent.unsubscribe();
    }
  });

  it('says a submit nobody received recorded nothing this time, and still how to find out', async () => {
    const err = await submit({ timeoutMs: 2000, ifUnanswered: hint });
    expect(err).toMatchObject({ code: 'service_unavailable', noAnswer: 'no_responders' });
    expect(err.message).toContain('so this attempt was not received');
    expect(err.message).toContain(`call ${callId} exists only if an earlier attempt recorded it`);
    expect(err.message).toContain(hint.check);
  });

  it('keeps the plain words for a read that gets no answer', async () => {
    const err = await adminFor({})
      .then((credential) => callService(nc, namespace, 'policy', 'status', {}, { timeoutMs: 2000, credential }))
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as Error).message).toMatch(/Check that the service is running/);
    expect((err as Error).message).not.toMatch(/may have been recorded/);
  });

  it.each(['append_unacknowledged', 'internal'])(
    'adds how to find out to an answer of %s, whose outcome is unknown, keeping the code',
    async (code) => {
      const responder = nc.subscribe(commandSubject(namespace, 'policy', 'submit'), {
        callback: (_e, m) => {
          m.respond(JSON.stringify({ ok: false, error: { code, message: 'The append was not acknowledged.' } }));
        },
      });
      try {
        const err = await submit({ timeoutMs: 2000, ifUnanswered: hint });
        expect(err).toBeInstanceOf(RemoteError);
        expect(err).toMatchObject({ code });
        expect(err.message).toBe(
          `The append was not acknowledged. So call ${callId} may or may not have been recorded. ${hint.check}`,
        );
      } finally {
        responder.unsubscribe();
      }
    },
  );
});

describe('callRpc', () => {
  let nc: NatsConnection;
  const namespace = randomNamespace('rpc');
  const apps = { tenant: 'acme', finance: ['com.example.bank'], not_finance: [] };

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'rpc-typed-test' });
  });
  afterAll(async () => {
    await nc.drain();
  });

  /** Answers `policy.risk.apps.get` with `data` while `run` runs, recording the requests. */
  async function answering<T>(data: unknown, run: () => Promise<T>): Promise<{ result: T; requests: unknown[] }> {
    const requests: unknown[] = [];
    const responder = nc.subscribe(commandSubject(namespace, 'policy', 'risk.apps.get'), {
      callback: (_e, m) => {
        requests.push(m.json());
        m.respond(JSON.stringify({ ok: true, data }));
      },
    });
    try {
      return { result: await run(), requests };
    } finally {
      responder.unsubscribe();
    }
  }

  it("sends the command on its service's subject and returns the reply's data", async () => {
    const { result, requests } = await answering(apps, () =>
      adminFor({ tenant: 'acme' }).then((credential) =>
        callRpc(nc, namespace, 'policy.risk.apps.get', { tenant: 'acme' }, { credential, checkReply: true }),
      ),
    );
    expect(result).toEqual(apps);
    expect(requests).toEqual([{ tenant: 'acme' }]);
  });

  it('holds the reply to its declared schema when asked to, and otherwise passes it on unchecked', async () => {
    const wrong = { ...apps, finance: 'com.example.bank' };
    const checked = await answering(wrong, () =>
      adminFor({ tenant: 'acme' })
        .then((credential) =>
          callRpc(nc, namespace, 'policy.risk.apps.get', { tenant: 'acme' }, { credential, checkReply: true }),
        )
        .catch((e: unknown) => e),
    );
    expect(checked.result).toBeInstanceOf(SchemaViolationError);
    expect((checked.result as Error).message).toBe('policy.risk.apps.get.reply is invalid: finance must be array.');
    const unchecked = await answering(wrong, () =>
      adminFor({ tenant: 'acme' }).then((credential) =>
        callRpc(nc, namespace, 'policy.risk.apps.get', { tenant: 'acme' }, { credential }),
      ),
    );
    expect(unchecked.result).toEqual(wrong);
  });

  it('refuses a name that is not a command before sending anything', async () => {
    await expect(
      adminFor({ tenant: 'a', call_id: 'b' }).then((credential) =>
        callRpc(nc, namespace, 'policy.nope' as 'policy.status', { tenant: 'a', call_id: 'b' }, { credential }),
      ),
    ).rejects.toThrow('policy.nope is not a command of any service');
  });
});

describe('waitUntilServing', () => {
  let nc: NatsConnection;
  let server: NatsConnection;
  const namespace = randomNamespace('ready');

  beforeAll(async () => {
    nc = await connectNats({ url: testEnv().natsUrl, name: 'ready-test' });
    server = await connectNats({ url: testEnv().natsUrl, name: 'ready-test-service' });
  });
  afterAll(async () => {
    await nc.drain();
    await server.drain();
  });

  it('keeps asking until a service that starts later answers health, and returns its answer', async () => {
    let asked = 0;
    // The service subscribes only after the third unanswered ask: nothing is timed, the asks themselves drive it.
    const waiting = waitUntilServing(nc, namespace, 'late', {
      timeoutMs: 10_000,
      stillStarting: () => {
        if (++asked === 3) {
          server.subscribe(commandSubject(namespace, 'late', 'health'), {
            callback: (_e, m) =>
              void m.respond(JSON.stringify({ ok: true, data: { service: 'late', pid: 7, endpoints: {} } })),
          });
        }
        return true;
      },
    });
    await expect(waiting).resolves.toEqual({ service: 'late', pid: 7, endpoints: {} });
    expect(asked).toBeGreaterThanOrEqual(3);
  });

  it('gives up at once when the process that was to serve is gone, and after the bound otherwise', async () => {
    await expect(waitUntilServing(nc, namespace, 'gone', { stillStarting: () => false })).rejects.toMatchObject({
      code: 'service_unavailable',
      noAnswer: 'no_responders',
    });
    await expect(waitUntilServing(nc, namespace, 'never', { timeoutMs: 300 })).rejects.toBeInstanceOf(
      ServiceUnavailableError,
    );
  });
});
