/**
 * How an agent's offered tools (policy's `policy.tools`: grant ∩ catalog, model-facing schemas) read as MCP tools, and
 * the cursor of `tools/list` pages. Pure.
 *
 * The annotations come from what each catalog manifest records about the tool's effect and risk. They are hints for
 * the client (MCP says so too): whatever they say, every call still goes through policy, which decides.
 */
import type { OfferedToolV1 } from '@ormuz/contracts';

/** One tool as `tools/list` gives it (the MCP `Tool` shape). */
export interface McpTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: { readonly type: 'object'; readonly [key: string]: unknown };
  readonly annotations: {
    readonly title: string;
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: boolean;
  };
  /** `taskSupport: 'optional'` for tools whose calls wait for the owner (2025-11-25 tasks). */
  readonly execution?: { readonly taskSupport: 'optional' };
  readonly _meta: {
    readonly 'ormuz/version': number;
    readonly 'ormuz/effect': string;
    readonly 'ormuz/risk_level': string;
  };
}

/**
 * The platform's own tools an MCP client is served besides the device's: reading a call's recorded status (what a
 * `pending_confirmation` or an unknown outcome says to do) and the next part of a result cut short (what a partial
 * result's continuation is for). The platform runs them as it does for a conversation (model-loop executes every
 * platform call, reading the calls of the same agent). The directory tools are not served: over MCP `tools/list` is
 * the whole grant, so there is nothing to search or activate.
 */
export const PLATFORM_TOOLS_SERVED: ReadonlySet<string> = new Set(['ormuz.check_call_status', 'ormuz.read_more']);

/**
 * Whether an offered tool is served over MCP: every tool a device runs, and of the platform's own (its catalog entry's
 * executor says which is which) those in {@link PLATFORM_TOOLS_SERVED}.
 */
export function servedOverMcp(tool: Pick<OfferedToolV1, 'name' | 'executor'>): boolean {
  return tool.executor !== 'platform' || PLATFORM_TOOLS_SERVED.has(tool.name);
}

/**
 * `device.list_contacts` → `Device: list contacts`. Manifests record no title, so it is worded from the name, which
 * already says what the tool does.
 */
export function titleOf(name: string): string {
  const dot = name.indexOf('.');
  const extension = dot > 0 ? name.slice(0, dot) : '';
  const tool = (dot > 0 ? name.slice(dot + 1) : name).replaceAll('_', ' ');
  return extension ? `${extension.charAt(0).toUpperCase()}${extension.slice(1)}: ${tool}` : tool;
}

/**
 * The MCP tool for an offered one. `readOnlyHint` for reads (`read`, `cursor_read`); a write is destructive unless
 * its risk is low (a `high` write always needs the owner, a `classify` one may); reads are idempotent, writes are
 * not (the same request twice may act twice, unless it carries the same operation id); device tools reach the world
 * outside the runtime (`openWorldHint`), the platform's own tools (executor `platform`) do not.
 */
export function mcpToolOf(tool: OfferedToolV1): McpTool {
  const read = tool.effect === 'read' || tool.effect === 'cursor_read';
  const title = titleOf(tool.name);
  return {
    name: tool.name,
    title,
    description: tool.description,
    inputSchema: { ...tool.parameters, type: 'object' },
    annotations: {
      title,
      readOnlyHint: read,
      destructiveHint: !read && tool.risk_level !== 'low',
      idempotentHint: read,
      openWorldHint: tool.executor !== 'platform',
    },
    // A high-risk call always waits for the owner: a client that supports tasks may run it as one, polling until the
    // owner has decided and the call has its real outcome.
    ...(tool.risk_level === 'high' ? { execution: { taskSupport: 'optional' as const } } : {}),
    _meta: { 'ormuz/version': tool.version, 'ormuz/effect': tool.effect, 'ormuz/risk_level': tool.risk_level },
  };
}

/** One page of `tools/list`. */
export interface ToolPage {
  readonly tools: readonly McpTool[];
  readonly nextCursor?: string;
}

/** Thrown for a cursor this gateway did not issue; the server answers it as invalid params. */
export class InvalidCursorError extends Error {
  constructor(cursor: string) {
    super(`The cursor ${JSON.stringify(cursor.slice(0, 100))} is not one tools/list gave; list again from the start.`);
    this.name = 'InvalidCursorError';
  }
}

const CURSOR = /^o([0-9]{1,9})$/;

/**
 * The page of `tools` that starts at `cursor` (the first without one), at most `pageSize` long. The cursor is the
 * offset in the offered list, which policy returns in a stable order; it is opaque to the client.
 */
export function pageOf(tools: readonly OfferedToolV1[], cursor: string | undefined, pageSize: number): ToolPage {
  let start = 0;
  if (cursor !== undefined) {
    const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
    const m = CURSOR.exec(decoded);
    if (!m) throw new InvalidCursorError(cursor);
    start = Number(m[1]);
  }
  const end = start + pageSize;
  const page = tools.slice(start, end).map(mcpToolOf);
  return end < tools.length
    ? { tools: page, nextCursor: Buffer.from(`o${end}`).toString('base64url') }
    : { tools: page };
}
