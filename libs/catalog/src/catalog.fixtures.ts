// Builders for small manifests in tests: a valid tool by default, overridden per test.
import type { ExtensionManifest } from './manifest.js';
import type { ToolDefinition } from './tool-definition.js';

/** A valid `shop.*` tool that reads one order by its number. */
export function tool(overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name: 'shop.order_status',
    version: 1,
    description:
      'Reads the delivery status of one order by its order number. Use it when the customer asks where an order ' +
      'is. Returns the status and the expected delivery date. Fails when no order has that number.',
    parameters: {
      order_number: {
        schema: { type: 'string', pattern: '^[0-9]{6}$', examples: ['123456'] },
        description: 'Six-digit order number printed on the receipt',
        controller: 'model',
      },
      include_history: {
        schema: { type: 'boolean' },
        description: 'Whether to include every past status change',
        controller: 'model',
        optional: true,
      },
    },
    effect: 'read',
    risk_level: 'low',
    executor: 'device',
    timeout_ms: 5_000,
    output: {
      description: 'The order status.',
      schema: {
        type: 'object',
        required: ['status'],
        properties: { status: { type: 'string' }, expected_on: { type: 'string', format: 'date' } },
      },
    },
    skills: ['order tracking', 'delivery'],
    ...overrides,
  };
}

/** An extension manifest named `name` holding `tools`. */
export function manifest(name: string, tools: readonly ToolDefinition[]): ExtensionManifest {
  return {
    apiVersion: 'ormuz.dev/v1',
    kind: 'Extension',
    metadata: { name, version: '1.0.0', description: `The ${name} extension.` },
    tools,
  };
}
