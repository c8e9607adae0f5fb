import { OrmuzError } from '@ormuz/contracts';

/**
 * A submit named a tool that is not in the catalog in any spelling and is not even shaped like a tool name, so it
 * cannot become a call: nothing is recorded, and the same operation id stays free. The message names the closest
 * real tools or says how to search the directory.
 */
export class UnknownToolNameError extends OrmuzError {
  readonly code = 'unknown_tool';
  constructor(guidance: string) {
    super(`${guidance} Nothing was recorded for this request.`);
  }
}

/** A tenant's finance app lists cannot be used as sent; the message says how to fix each problem. Nothing was stored. */
export class RiskAppsError extends OrmuzError {
  readonly code = 'risk_apps_invalid';
  constructor(problems: string) {
    super(`${problems} Nothing was stored.`);
  }
}
