import type { OfferedToolV1 } from '@ormuz/contracts';
import { reportOfStatus, resultOf, stillRunning } from './call-result.js';
import { clientOperationId, isSessionOperationId, sessionOperationId } from './operation-id.js';
import { deviceOf, originProblem } from './request-guard.js';
import { InvalidCursorError, mcpToolOf, pageOf, titleOf } from './tool-listing.js';

const tool = (name: string, effect: string, risk_level: string): OfferedToolV1 => ({
  name,
  version: 1,
  description: `${name} does things`,
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  effect,
  risk_level,
  executor: name.startsWith('ormuz.') ? 'platform' : 'device',
});

describe('tool listing', () => {
  it('titles a tool from its name', () => {
    expect(titleOf('device.list_contacts')).toBe('Device: list contacts');
    expect(titleOf('plain')).toBe('plain');
  });

  it('derives the annotations from effect, risk and executor', () => {
    expect(mcpToolOf(tool('device.list_contacts', 'read', 'low')).annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: true,
    });
    expect(mcpToolOf(tool('device.send_message', 'write', 'high')).annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
    });
    expect(mcpToolOf(tool('device.tap', 'write', 'classify')).annotations.destructiveHint).toBe(true);
    expect(mcpToolOf(tool('ormuz.read_more', 'cursor_read', 'low')).annotations).toMatchObject({
      readOnlyHint: true,
      openWorldHint: false,
    });
  });

  it('pages with opaque cursors that chain to the end, and refuses one it did not give', () => {
    const tools = ['a.one', 'a.two', 'a.three', 'a.four', 'a.five'].map((n) => tool(n, 'read', 'low'));
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = pageOf(tools, cursor, 2);
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
    } while (cursor);
    expect(names).toEqual(tools.map((t) => t.name));
    expect(pageOf(tools, undefined, 10).nextCursor).toBeUndefined();
    expect(() => pageOf(tools, 'garbage', 2)).toThrow(InvalidCursorError);
  });
});

describe('request guard', () => {
  const hosts = ['localhost', '127.0.0.1', '[::1]'];
  it('serves loopback hosts on any port, without an origin or with an allowed one', () => {
    expect(originProblem('127.0.0.1:8083', undefined, hosts, [])).toBeUndefined();
    expect(originProblem('[::1]:1', 'https://app.example', hosts, ['https://app.example'])).toBeUndefined();
    expect(originProblem('localhost:8083', 'http://localhost:8083', hosts, [])).toBeUndefined();
  });
  it('refuses another host (DNS rebinding), a missing one, and an origin not allowed', () => {
    expect(originProblem('evil.example:8083', undefined, hosts, [])).toMatch(/does not answer to host evil.example/);
    expect(originProblem(undefined, undefined, hosts, [])).toMatch(/no Host/);
    expect(originProblem('localhost', 'http://evil.example', hosts, [])).toMatch(/origin http:\/\/evil.example/);
  });
  it("reads the device header within the key's tenant", () => {
    expect(deviceOf(undefined, 'acme')).toEqual({ deviceId: null });
    expect(deviceOf('phone-1', 'acme')).toEqual({ deviceId: 'phone-1' });
    expect(deviceOf('acme/phone-1', 'acme')).toEqual({ deviceId: 'phone-1' });
    expect(deviceOf('globex/phone-1', 'acme')).toMatchObject({ forbidden: true });
    expect(deviceOf('a.b', 'acme')).toMatchObject({ forbidden: false });
  });
});

describe('operation ids', () => {
  it("uses the client's own, refusing one that is not an identifier", () => {
    expect(clientOperationId({ 'ormuz/operation_id': 'op-1' })).toBe('op-1');
    expect(clientOperationId({})).toBeUndefined();
    expect(() => clientOperationId({ 'ormuz/operation_id': 'a b' })).toThrow(/must be 1 to 128/);
    // The shape of a derived id is the gateway's own: a client's would be taken for a session's.
    expect(() => clientOperationId({ 'ormuz/operation_id': sessionOperationId('s1', 7) })).toThrow(/gateway's own/);
    expect(clientOperationId({ 'ormuz/operation_id': 'mcp-1' })).toBe('mcp-1');
  });
  it('derives one per session and request id', () => {
    const id = sessionOperationId('s1', 7);
    expect(id).toMatch(/^mcp-[0-9a-f]{40}$/);
    expect(sessionOperationId('s1', 7)).toBe(id);
    expect(sessionOperationId('s1', '7')).not.toBe(id);
    expect(sessionOperationId('s2', 7)).not.toBe(id);
  });
  it("tells a derived id from a client's", () => {
    expect(isSessionOperationId(sessionOperationId('s1', 7))).toBe(true);
    expect(isSessionOperationId('op-1')).toBe(false);
    expect(isSessionOperationId('mcp-1')).toBe(false);
  });
});

describe('call results', () => {
  const CALL = 'call_0123456789abcdef0123456789abcdef';
  it('fences a success and flags refusals and failures as errors', () => {
    const ok = resultOf(CALL, 'device.list_contacts', 'device:phone-1', { status: 'succeeded', result: { n: 1 } });
    expect(ok.isError).toBe(false);
    expect(ok.structuredContent).toEqual({
      status: 'succeeded',
      call_id: CALL,
      tool: 'device.list_contacts',
      outcome: { n: 1 },
    });
    expect(ok.content[0]!.text).toContain(`<<<BEGIN UNTRUSTED DATA ${CALL}>>>`);
    expect(resultOf(CALL, 't.x', 'ormuz', { status: 'refused', message: 'no' }).isError).toBe(true);
    expect(resultOf(CALL, 't.x', 'ormuz', { status: 'failed', error: { code: 'e', message: 'm' } }).isError).toBe(true);
  });
  it('answers a staged call as pending, saying not to call again', () => {
    const pending = resultOf(CALL, 'device.send_message', 'ormuz', {
      status: 'pending_confirmation',
      approval_id: 'apr_1',
      summary: 'Send a text',
    });
    expect(pending.isError).toBe(false);
    expect(pending.structuredContent).toMatchObject({ status: 'pending_confirmation', approval_id: 'apr_1' });
    expect(pending.content[0]!.text).toMatch(/Do not call device.send_message again.*ormuz.check_call_status/s);
    expect(stillRunning(CALL, 't.x', 'dispatched', 30_000).content[0]!.text).toMatch(/Do not call it again/);
  });
  it('reads a settled status view, and nothing from a running one', () => {
    const view = {
      status: 'dispatched' as const,
      call_id: CALL,
      tool: 't.x',
      payload_sha256: null,
      outcome: null,
      unknown_cause: null,
      pending_approval: null,
      sealed_by: null,
      next_step: 'wait',
    };
    expect(reportOfStatus(view)).toBeUndefined();
    expect(reportOfStatus({ ...view, status: 'expired' })).toEqual({ status: 'expired' });
    expect(reportOfStatus({ ...view, status: 'succeeded', outcome: { kind: 'succeeded', result: 1 } })).toEqual({
      status: 'succeeded',
      result: 1,
    });
  });
});
