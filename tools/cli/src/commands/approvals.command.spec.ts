import type { ApprovalViewV1 } from '@ormuz/contracts';
import { approvalLine } from './approvals.command.js';

const approval: ApprovalViewV1 = {
  approval_id: 'apr_1',
  call_id: 'call_1',
  tenant: 'acme',
  tool: 'device.type_text',
  agent_id: 'agent-1',
  device_id: 'phone-1',
  summary: 'Type "meet me at the station" in com.example.notes',
  arguments: { text: 'meet me at the station' },
  risk_reasons: [
    'requested after reading the screen com.example.messages (inbox) of phone-1: its text "meet me at the station" appeared there',
    'device.type_text is low risk',
  ],
  staged_at: '2026-12-02T03:00:00.000Z',
  payload_sha256: 'ab',
  contract_version: '1',
  status: 'pending',
  expires_at: '2026-12-02T04:00:00.000Z',
  decided_by: null,
  decided_at: null,
};

describe('ormuz approvals', () => {
  it('shows why each call waits, the taint reason first', () => {
    expect(approvalLine(approval).split('\n')).toEqual([
      'apr_1  pending   device.type_text  call call_1',
      '    Type "meet me at the station" in com.example.notes',
      '    why: requested after reading the screen com.example.messages (inbox) of phone-1: its text "meet me at the ' +
        'station" appeared there; device.type_text is low risk',
      '    expires 2026-12-02T04:00:00.000Z',
    ]);
  });

  it('leaves the line out when there is no reason', () => {
    expect(approvalLine({ ...approval, risk_reasons: [] })).not.toContain('why:');
  });
});
