import { OrmuzError } from '@ormuz/contracts';

/** No credential, or one that could not be verified (expired, wrong issuer or audience, unknown or revoked key). */
export class UnauthenticatedError extends OrmuzError {
  readonly code = 'unauthenticated';
}

/** A verified identity asking for something its tenant or roles do not allow. */
export class ForbiddenError extends OrmuzError {
  readonly code = 'forbidden';
}
