import { OrmuzError } from '@ormuz/contracts';

export class CallNotFoundError extends OrmuzError {
  readonly code = 'call_not_found';
  constructor(tenant: string, callId: string) {
    super(`No call ${callId} exists for tenant ${tenant}. Check the id; call ids come from the submit reply.`);
  }
}
