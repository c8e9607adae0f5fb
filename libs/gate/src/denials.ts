/**
 * Repeat after denial: a request identical to one the owner denied earlier in the same conversation (the same tool,
 * the same canonical arguments once normalised) is refused with the owner's reason, and the owner is not asked again.
 * Pure: the conversation's denials come with the request (`denials` of `policy.submit`).
 */
import { canonicalPayload, type OwnerDenialV1 } from '@ormuz/contracts';
import { prepareCall, type Catalog, type DesignerConfig, type Grant } from '@ormuz/catalog';

/** The denial `tool` with the canonical bytes `sha256` repeats, if any. */
export function repeatedDenial(
  catalog: Catalog,
  grant: Grant,
  designer: DesignerConfig | undefined,
  denials: readonly OwnerDenialV1[] | undefined,
  tool: string,
  sha256: string,
): OwnerDenialV1 | undefined {
  return (denials ?? []).find((denial) => {
    const prepared = prepareCall(catalog, grant, { tool: denial.tool, arguments: denial.arguments }, designer);
    return prepared.ok && prepared.definition.name === tool && canonicalPayload(prepared.args).sha256 === sha256;
  });
}

/** The model's refusal for a repeat of `denial`, quoting the owner. */
export function repeatedDenialMessage(denial: OwnerDenialV1): string {
  const said = denial.reason ? `, saying: ${JSON.stringify(denial.reason)}` : ' (they gave no reason)';
  return (
    `The owner already denied this exact request in this conversation (call ${denial.call_id})${said}. It was not ` +
    'asked again and did not run. Do not request it again; tell the user it was declined.'
  );
}
