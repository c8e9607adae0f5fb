import { OrmuzError } from '@ormuz/contracts';

export class ApprovalNotFoundError extends OrmuzError {
  readonly code = 'approval_not_found';
  constructor(tenant: string, approvalId: string) {
    super(`No approval ${approvalId} exists for tenant ${tenant}. List pending approvals to see their ids.`);
  }
}
