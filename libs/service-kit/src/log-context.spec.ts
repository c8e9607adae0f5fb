import { logContextOf } from './log-context.js';

describe('logContextOf: the ids a log line about a request carries', () => {
  it('carries the tenant, call, correlation and aggregate ids a request names', () => {
    expect(
      logContextOf({
        tenant: 'acme',
        call_id: 'call_1',
        correlation_id: 'conv_1',
        agent_id: 'a1',
        arguments: { message_body: 'secret' },
        credential: 'ormz_x',
      }),
    ).toEqual({ tenant: 'acme', call_id: 'call_1', correlation_id: 'conv_1', agent_id: 'a1' });
  });
  it('leaves out what is not a short string, and answers nothing for a body that is not an object', () => {
    expect(logContextOf({ tenant: 7, call_id: 'x'.repeat(201), device_id: 'phone-1' })).toEqual({
      device_id: 'phone-1',
    });
    expect(logContextOf(null)).toEqual({});
    expect(logContextOf(['acme'])).toEqual({});
  });
});
