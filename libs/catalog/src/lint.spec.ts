import { Catalog } from './catalog.js';
import { manifest, tool } from './catalog.fixtures.js';
import { loadShippedCatalog } from './extensions/shipped.js';
import { descriptionSimilarity, formatLintFindings, hasLintErrors, lintCatalog } from './lint.js';

const DUPLICATE =
  'Reads the delivery status of one order by its order number. Use it when the customer asks where an order is. ' +
  'Returns the status and the expected delivery date. Fails when no order has that number.';

const bad = Catalog.load([
  manifest('shop', [
    tool({ name: 'shop.fetch', description: 'Fetches data.', output: undefined }),
    tool({ name: 'shop.order_status', description: DUPLICATE }),
    tool({ name: 'shop.order_state', description: DUPLICATE.replace('delivery status', 'delivery state') }),
    tool({
      name: 'shop.cancel_order',
      description:
        'Cancels one order that has not shipped yet, so the customer is not charged for it and stock is released ' +
        'back to the warehouse the same day; use it only when the customer asked for the cancellation in this chat.',
      parameters: {
        id: { schema: { type: 'string' }, description: 'Order', controller: 'model' },
      },
    }),
  ]),
]);

describe('lintCatalog', () => {
  const findings = lintCatalog(bad);
  const rulesOf = (tool: string): string[] => findings.filter((f) => f.tool === tool).map((f) => f.rule);

  it('finds a description that is too short and says nothing of output or failure, and a missing output contract', () => {
    expect(rulesOf('shop.fetch@1')).toEqual([
      'description-no-failure',
      'description-no-output',
      'description-too-short',
      'missing-output-contract',
    ]);
  });

  it('finds near-duplicate descriptions, reporting the pair and the score', () => {
    const [finding, ...rest] = findings.filter((f) => f.rule === 'near-duplicate-description');
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({ extension: 'shop', tool: 'shop.order_status@1', severity: 'error' });
    expect(finding!.message).toMatch(/^The description is \d+% similar to shop\.order_state@1's/);
  });

  it('finds ambiguous argument names and thin argument descriptions', () => {
    expect(rulesOf('shop.cancel_order@1')).toEqual([
      'ambiguous-argument-name',
      'description-no-failure',
      'description-no-output',
      'parameter-description-too-short',
    ]);
    expect(findings.find((f) => f.rule === 'parameter-description-too-short')?.severity).toBe('warning');
  });

  it('passes the shipped extensions without a finding', () => {
    expect(lintCatalog(loadShippedCatalog())).toEqual([]);
  });

  it('warns when a tool leaves its executor to the default, or a high-risk tool has no owner summary', () => {
    const { executor: _, ...undeclared } = tool({ risk_level: 'high' });
    const warned = lintCatalog(Catalog.load([manifest('shop', [undeclared])]));
    expect(warned.map((f) => [f.rule, f.severity])).toEqual([
      ['executor-not-declared', 'warning'],
      ['missing-owner-summary', 'warning'],
    ]);
    expect(warned[0]!.message).toContain('declare executor: "device"');
    const written = tool({ risk_level: 'high', owner_summary: 'Track order {order_number}' });
    expect(lintCatalog(Catalog.load([manifest('shop', [written])]))).toEqual([]);
  });

  it('prints aligned rows: extension, tool, severity, rule, message', () => {
    const rows = formatLintFindings(findings).split('\n');
    expect(rows).toHaveLength(findings.length);
    expect(rows[0]).toMatch(/^shop +shop\.cancel_order@1 +error +ambiguous-argument-name +Argument "id"/);
    const messageColumn = (row: string, f: (typeof findings)[number]): number => row.indexOf(f.message);
    expect(new Set(rows.map((row, i) => messageColumn(row, findings[i]!))).size).toBe(1);
    expect(hasLintErrors(findings)).toBe(true);
  });
});

describe('descriptionSimilarity', () => {
  it('is 1 for the same text and 0 for texts without a shared word', () => {
    expect(descriptionSimilarity(DUPLICATE, DUPLICATE)).toBeCloseTo(1);
    expect(descriptionSimilarity('Sends a message.', 'Opens the camera app.')).toBe(0);
  });
});
