/**
 * Step 3 of the agent loop in its walking-skeleton form: what policy decides for a requested call. Pure.
 */
import { findTool, closestNames, type ToolDefinition } from './catalog.js';

export type GateDecision =
  | { readonly kind: 'refuse'; readonly reasonCode: string; readonly message: string }
  | {
      readonly kind: 'stage';
      readonly summary: string;
      readonly expiresAt: Date;
      readonly verdict: { level: 'high'; reasons: string[] };
    }
  | { readonly kind: 'authorize'; readonly verdict: { level: 'low'; reasons: string[] } };

export interface GateInput {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly target: { device_id: string } | null;
}

/** Describes a staged call for the owner who must decide on it. */
export function ownerSummary(def: ToolDefinition, args: Record<string, unknown>): string {
  if (def.name === 'device.send_message') {
    return `Send a text message to ${String(args.recipient)}: "${String(args.message_body).slice(0, 200)}"`;
  }
  return `Run ${def.name} with ${JSON.stringify(args).slice(0, 300)}`;
}

export function decideGate(input: GateInput, now: Date, approvalTtlMs: number): GateDecision {
  const def = findTool(input.tool);
  if (!def) {
    return {
      kind: 'refuse',
      reasonCode: 'unknown_tool',
      message:
        `There is no tool named "${input.tool}". The closest real tools are ${closestNames(input.tool).join(', ')}; ` +
        'call one of them, or search the directory with ormuz.search_tools.',
    };
  }
  if (def.name.startsWith('device.') && !input.target) {
    return {
      kind: 'refuse',
      reasonCode: 'no_device',
      message: `${def.name} acts on a phone, and this conversation has no device attached. Ask the owner to connect one.`,
    };
  }
  if (def.risk === 'high') {
    return {
      kind: 'stage',
      summary: ownerSummary(def, input.args),
      expiresAt: new Date(now.getTime() + approvalTtlMs),
      verdict: { level: 'high', reasons: [`${def.name} is a high-risk tool`] },
    };
  }
  return { kind: 'authorize', verdict: { level: 'low', reasons: [`${def.name} is a low-risk ${def.effect}`] } };
}
