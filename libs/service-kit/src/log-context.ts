/**
 * What a log line about a command carries of the request it served: the tenant, the call, the correlation and the
 * aggregate ids a request names (each only when it is a short string), so that one call's or one tenant's lines can
 * be found across services. Never arguments, results or credentials.
 */

/** The request fields a log line may carry, as the log names them. */
const CARRIED = {
  tenant: 'tenant',
  call_id: 'call_id',
  correlation_id: 'correlation_id',
  conversation_id: 'conversation_id',
  approval_id: 'approval_id',
  device_id: 'device_id',
  agent_id: 'agent_id',
} as const;

/** Longest id carried; longer values are not ids and are left out. */
const MAX_ID_CHARS = 200;

export type LogContext = Partial<Record<keyof typeof CARRIED, string>>;

/** The ids `body` names, for a log line. */
export function logContextOf(body: unknown): LogContext {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  const fields: LogContext = {};
  for (const key of Object.keys(CARRIED) as (keyof typeof CARRIED)[]) {
    const value = (body as Record<string, unknown>)[key];
    if (typeof value === 'string' && value.length <= MAX_ID_CHARS) fields[key] = value;
  }
  return fields;
}
