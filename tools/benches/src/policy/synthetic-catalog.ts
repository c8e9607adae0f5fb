/**
 * A synthetic ~200-tool catalog and a realistic mix of tool requests for the gate benchmark. Deterministic (seeded),
 * so two runs decide the same requests. Bench-only: nothing in the service imports it.
 *
 * Catalog: the shipped core (4) and device (10) extensions plus `ext01`…`ext19` with 10 tools each (204 tools). Each
 * generated tool has 2–6 parameters of mixed types (text, patterned codes, integers and numbers with bounds, booleans,
 * enums, string lists, dates, nested address objects); every 4th has a combination rule (`record_ref`, or both
 * `lookup_name` and `lookup_city`), every 5th is `classify` risk with an optional `target_text`, every 7th has a
 * designer-controlled `region_code`.
 */
import type {
  CombinationRule,
  DesignerConfig,
  ExtensionManifest,
  ParameterDefinition,
  ToolDefinition,
} from '@ormuz/catalog';
import { CORE_EXTENSION, DEFAULT_DESIGNER_CONFIG, SHIPPED_EXTENSIONS } from '@ormuz/catalog';
import type { JsonSchema, JsonValue } from '@ormuz/contracts';
import type { GateRequest } from '@ormuz/policy';

/** mulberry32: a small seeded PRNG, so the catalog and the mix are the same on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
type Rnd = () => number;
const pick = <T>(rnd: Rnd, items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;

type Kind = 'text' | 'code' | 'count' | 'amount' | 'flag' | 'choice' | 'tags' | 'date' | 'address';
const KINDS: readonly Kind[] = ['text', 'code', 'count', 'amount', 'flag', 'choice', 'tags', 'date', 'address'];

const NAMES: Record<Kind, readonly string[]> = {
  text: ['customer_name', 'note_text', 'subject_line', 'search_phrase', 'display_title', 'comment_body'],
  code: ['order_code', 'ticket_code', 'invoice_code', 'sku_code'],
  count: ['page_size', 'quantity', 'max_items', 'retry_limit', 'priority_rank'],
  amount: ['amount_eur', 'weight_kg', 'discount_rate', 'budget_limit'],
  flag: ['include_archived', 'notify_owner', 'dry_run', 'urgent'],
  choice: ['sort_order', 'status_filter', 'delivery_channel', 'visibility'],
  tags: ['label_names', 'recipient_emails', 'item_codes'],
  date: ['due_date', 'start_date', 'report_date'],
  address: ['shipping_address', 'billing_address'],
};

function schemaOf(kind: Kind): JsonSchema {
  switch (kind) {
    case 'text':
      return { type: 'string', minLength: 1, maxLength: 200, examples: ['Ana Souza'] };
    case 'code':
      return { type: 'string', pattern: '^[A-Z]{3}-[0-9]{4}$', examples: ['ORD-1234'] };
    case 'count':
      return { type: 'integer', minimum: 1, maximum: 500, examples: [20] };
    case 'amount':
      return { type: 'number', minimum: 0, maximum: 1_000_000, examples: [12.5] };
    case 'flag':
      return { type: 'boolean' };
    case 'choice':
      return { enum: ['newest', 'oldest', 'open', 'closed', 'email', 'sms'], examples: ['newest'] };
    case 'tags':
      return { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 40 } };
    case 'date':
      return { type: 'string', format: 'date', examples: ['2025-03-14'] };
    case 'address':
      return {
        type: 'object',
        required: ['street', 'city'],
        additionalProperties: false,
        properties: { street: { type: 'string' }, city: { type: 'string' }, postcode: { type: 'string' } },
      };
  }
}

const WORDS = ['alpha', 'lisbon', 'quarterly', 'report', 'refund', 'blue', 'team', 'priority', 'review', 'north'];

function validValue(kind: Kind, rnd: Rnd): JsonValue {
  switch (kind) {
    case 'text':
      return `${pick(rnd, WORDS)} ${pick(rnd, WORDS)} ${Math.floor(rnd() * 100)}`;
    case 'code':
      return `${pick(rnd, ['ORD', 'TKT', 'INV', 'SKU'])}-${String(1000 + Math.floor(rnd() * 9000))}`;
    case 'count':
      return 1 + Math.floor(rnd() * 200);
    case 'amount':
      return Math.round(rnd() * 10_000) / 100;
    case 'flag':
      return rnd() < 0.5;
    case 'choice':
      return pick(rnd, ['newest', 'oldest', 'open', 'closed', 'email', 'sms']);
    case 'tags':
      return Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(rnd, WORDS));
    case 'date':
      return `2025-0${1 + Math.floor(rnd() * 9)}-1${Math.floor(rnd() * 10)}`;
    case 'address':
      return rnd() < 0.5
        ? { street: 'Rua Augusta 12', city: 'Lisbon' }
        : { street: 'Hauptstraße 5', city: 'Berlin', postcode: '10115' };
  }
}

/** A value of the wrong JSON type (or out of range) for `kind`, as models send them. */
function wrongValue(kind: Kind, rnd: Rnd): JsonValue {
  switch (kind) {
    case 'count':
      return rnd() < 0.5 ? '20' : 0;
    case 'amount':
      return '12,50';
    case 'flag':
      return 'yes';
    case 'tags':
      return 'alpha, beta';
    case 'address':
      return 'Rua Augusta 12, Lisbon';
    case 'code':
      return rnd() < 0.5 ? 'order 1234' : 1234;
    case 'choice':
      return 'latest';
    case 'date':
      return '14/03/2025';
    case 'text':
      return rnd() < 0.5 ? 42 : '';
  }
}

interface ParamSpec {
  readonly name: string;
  readonly kind: Kind;
  readonly optional: boolean;
}

/** What the request generator needs to know about a generated tool. */
export interface SynthTool {
  readonly name: string;
  readonly params: readonly ParamSpec[];
  readonly combination: boolean;
  readonly classify: boolean;
  readonly designer: boolean;
}

const VERBS = ['get', 'list', 'search', 'create', 'update', 'archive', 'export', 'schedule', 'assign', 'cancel'];
const MORE_VERBS = ['approve', 'submit', 'confirm', 'lookup', 'preview', 'sync', 'rename', 'close', 'tag', 'reopen'];
const NOUNS = ['order', 'invoice', 'ticket', 'event', 'shipment', 'report', 'task', 'note', 'record', 'booking'];
const READ_VERBS = new Set(['get', 'list', 'search', 'export', 'lookup', 'preview']);

const LOOKUP: ParamSpec[] = [
  { name: 'record_ref', kind: 'code', optional: true },
  { name: 'lookup_name', kind: 'text', optional: true },
  { name: 'lookup_city', kind: 'text', optional: true },
];

function description(verb: string, noun: string, ext: string): string {
  return (
    `${verb.charAt(0).toUpperCase()}${verb.slice(1)}s one ${noun} in the ${ext} workspace. Use it when the user asks ` +
    `to ${verb} a ${noun}. Returns the ${noun} with its id and status. Fails when the ${noun} does not exist or the ` +
    `caller may not see it.`
  );
}

function parameter(spec: ParamSpec): ParameterDefinition {
  return {
    schema: schemaOf(spec.kind),
    description: `The ${spec.name.replaceAll('_', ' ')} of the request; see the tool description`,
    controller: 'model',
    ...(spec.optional ? { optional: true } : {}),
  };
}

/** The generated extensions, their designer configuration, and the tools described for request generation. */
export function syntheticExtensions(extensions = 19, toolsPerExtension = 10) {
  const rnd = prng(0x0a7e);
  const manifests: ExtensionManifest[] = [];
  const tools: SynthTool[] = [];
  const designer: Record<string, Record<string, JsonValue>> = {};
  for (let e = 1; e <= extensions; e++) {
    const ext = `ext${String(e).padStart(2, '0')}`;
    const defs: ToolDefinition[] = [];
    const used = new Set<string>();
    for (let i = 0; i < toolsPerExtension; i++) {
      let verb = VERBS[(e * 3 + i) % VERBS.length]!;
      const noun = NOUNS[(e + i * 3) % NOUNS.length]!;
      if (used.has(`${verb}_${noun}`)) verb = MORE_VERBS[(e + i) % MORE_VERBS.length]!;
      if (used.has(`${verb}_${noun}`)) verb = `${verb}_again`;
      used.add(`${verb}_${noun}`);
      const name = `${ext}.${verb}_${noun}`;
      const serial = e * toolsPerExtension + i;
      const combination = serial % 4 === 0;
      const classify = serial % 5 === 0;
      const hasDesigner = serial % 7 === 0;
      const count = 2 + ((e * 7 + i * 3) % 5);
      const params: ParamSpec[] = [];
      const names = new Set<string>();
      while (params.length < count) {
        const kind = pick(rnd, KINDS);
        const pname = NAMES[kind].find((n) => !names.has(n));
        if (!pname) continue;
        names.add(pname);
        // The first two are required; later ones are optional one time in three.
        params.push({ name: pname, kind, optional: params.length >= 2 && rnd() < 0.33 });
      }
      if (combination) params.push(...LOOKUP);
      if (classify) params.push({ name: 'target_text', kind: 'text', optional: true });
      const parameters: Record<string, ParameterDefinition> = {};
      for (const p of params) {
        parameters[p.name] =
          p.name === 'target_text'
            ? {
                schema: { type: 'string', maxLength: 2000 },
                description: 'Visible text of the button or link the user pressed to ask for this; empty when none',
                controller: 'model',
                optional: true,
              }
            : parameter(p);
      }
      if (hasDesigner) {
        parameters.region_code = {
          schema: { enum: ['eu', 'us'] },
          description: 'Data region of the deployment; set by configuration',
          controller: 'designer',
        };
        designer[name] = { region_code: 'eu' };
      }
      const combinations: CombinationRule[] = combination
        ? [
            {
              oneOf: [['record_ref'], ['lookup_name', 'lookup_city']],
              message: 'Send a record_ref, or both lookup_name and lookup_city.',
            },
          ]
        : [];
      defs.push({
        name,
        version: 1,
        description: description(verb.replace('_again', ''), noun, ext),
        parameters,
        ...(combination ? { combinations } : {}),
        effect: READ_VERBS.has(verb) ? 'read' : 'write',
        risk_level: classify ? 'classify' : 'low',
        timeout_ms: 10_000,
        output: {
          description: `The ${noun} with its id and status.`,
          schema: {
            type: 'object',
            required: ['id', 'status'],
            properties: { id: { type: 'string' }, status: { type: 'string' } },
          },
        },
        skills: [`${verb.replace('_again', '')} ${noun}`, `${ext} ${noun}`],
      });
      tools.push({ name, params, combination, classify, designer: hasDesigner });
    }
    manifests.push({
      apiVersion: 'ormuz.dev/v1',
      kind: 'Extension',
      metadata: { name: ext, version: '1.0.0', description: `Synthetic extension ${ext} for the gate benchmark.` },
      tools: defs,
    });
  }
  return { manifests, tools, designer };
}

/** Everything {@link Catalog.load} needs for the bench catalog. */
export function benchCatalogInput() {
  const synth = syntheticExtensions();
  const designer: DesignerConfig = { ...DEFAULT_DESIGNER_CONFIG, ...synth.designer };
  return {
    manifests: [...SHIPPED_EXTENSIONS, ...synth.manifests],
    options: { core: CORE_EXTENSION, designer },
    tools: synth.tools,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The request mix.

/** Button labels in several scripts; some mean send/pay/confirm/buy, some only look like it (Sender, Repayment). */
export const LABELS = [
  'Send',
  'Sender',
  'Repayment history',
  'Confirm transfer',
  'Open settings',
  'Inbox',
  'Search',
  'Passer la commande',
  'Jetzt kaufen',
  'Enviar mensaje',
  'Отправить сообщение',
  'Αποστολή',
  'إرسال الآن',
  'שלח הודעה',
  'भुगतान करें',
  'ส่งข้อความ',
  '보내기',
  '今すぐ購入する',
  '确认付款',
  'Weather in Lisbon today: 21°C, light wind from the north-west',
];
const PACKAGES = [
  'com.example.messages',
  'com.example.notes',
  'org.acme.mail',
  'com.google.android.apps.maps',
  'com.paypal.android.p2pmobile',
  'com.android.settings',
];

export type Category = 'valid' | 'camel' | 'screen' | 'high' | 'core' | 'invalid' | 'denied' | 'unknown';

/** Share of each category in the mix, in percent. */
export const MIX: Readonly<Record<Category, number>> = {
  valid: 48,
  camel: 10,
  screen: 22,
  high: 4,
  core: 5,
  invalid: 7,
  denied: 2,
  unknown: 2,
};

export interface BenchRequest {
  readonly category: Category;
  readonly request: GateRequest;
}

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const kebab = (s: string) => s.replaceAll('_', '-');

function validArgs(tool: SynthTool, rnd: Rnd): Record<string, JsonValue> {
  const args: Record<string, JsonValue> = {};
  for (const p of tool.params) {
    if (p.name === 'record_ref' || p.name === 'lookup_name' || p.name === 'lookup_city') continue;
    if (p.name === 'target_text') {
      if (rnd() < 0.7) args.target_text = pick(rnd, LABELS);
      continue;
    }
    if (!p.optional || rnd() < 0.5) args[p.name] = validValue(p.kind, rnd);
  }
  if (tool.combination) {
    if (rnd() < 0.5) args.record_ref = validValue('code', rnd);
    else {
      args.lookup_name = validValue('text', rnd);
      args.lookup_city = 'Porto';
    }
  }
  return args;
}

function invalidArgs(tool: SynthTool, rnd: Rnd): Record<string, JsonValue> {
  const args = validArgs(tool, rnd);
  const required = tool.params.filter((p) => !p.optional);
  const r = rnd();
  if (r < 0.4) {
    const p = pick(rnd, required);
    args[p.name] = wrongValue(p.kind, rnd);
  } else if (r < 0.6) {
    delete args[pick(rnd, required).name];
  } else if (r < 0.8) {
    args.colour_hint = 'blue';
  } else if (tool.combination) {
    args.record_ref = 'ORD-1234';
    args.lookup_name = 'Ana';
  } else {
    const p = pick(rnd, required);
    args[p.name] = wrongValue(p.kind, rnd);
  }
  return args;
}

function screenRequest(rnd: Rnd): GateRequest {
  const fg = pick(rnd, PACKAGES);
  const label = pick(rnd, LABELS);
  const r = rnd();
  const device = rnd() < 0.02 ? null : 'phone-1';
  const camelKeys = rnd() < 0.15;
  const fgKey = camelKeys ? 'foregroundPackage' : 'foreground_package';
  const ttKey = camelKeys ? 'targetText' : 'target_text';
  if (r < 0.5) {
    const where =
      rnd() < 0.85
        ? { ref: `e${Math.floor(rnd() * 60)}` }
        : { x: Math.floor(rnd() * 1080), y: Math.floor(rnd() * 2000) };
    return { tool: 'device.tap', arguments: { [fgKey]: fg, [ttKey]: label, ...where }, deviceId: device };
  }
  if (r < 0.7) {
    return {
      tool: 'device.type_text',
      arguments: {
        [fgKey]: fg,
        [ttKey]: pick(rnd, ['Message', 'Search', 'To', 'Поиск', '検索']),
        text: 'Running 10 minutes late',
      },
      deviceId: device,
    };
  }
  if (r < 0.85)
    return { tool: 'device.swipe', arguments: { [fgKey]: fg, direction: pick(rnd, ['up', 'down']) }, deviceId: device };
  if (r < 0.95) {
    return {
      tool: 'device.press_key',
      arguments: { [fgKey]: fg, key: pick(rnd, ['back', 'home', 'enter']) },
      deviceId: device,
    };
  }
  return { tool: 'device.open_app', arguments: { package_name: fg }, deviceId: device };
}

/** A misspelling of a real name (one character dropped, or two swapped), or a name nothing resembles. */
function unknownName(tools: readonly SynthTool[], rnd: Rnd): string {
  if (rnd() < 0.5) {
    return pick(rnd, [
      'weather.forecast',
      'send_email',
      'calendar.create_event',
      'browser.open_url',
      'ext04.teleport_user',
    ]);
  }
  const name =
    rnd() < 0.3
      ? pick(rnd, ['device.send_message', 'device.screen_observe', 'device.list_contacts'])
      : pick(rnd, tools).name;
  const at = name.indexOf('.') + 2 + Math.floor(rnd() * (name.length - name.indexOf('.') - 3));
  return rnd() < 0.5
    ? name.slice(0, at) + name.slice(at + 1)
    : name.slice(0, at) + name[at + 1] + name[at] + name.slice(at + 2);
}

/**
 * `size` requests drawn by {@link MIX}. `denied` lists tools the bench grant denies (calls to them are refused as not
 * permitted); `tools` are the generated tools.
 */
export function requestMix(
  tools: readonly SynthTool[],
  denied: readonly string[],
  size: number,
  seed = 42,
): BenchRequest[] {
  const rnd = prng(seed);
  const allowed = tools.filter((t) => !denied.includes(t.name));
  const categories = Object.entries(MIX) as [Category, number][];
  const out: BenchRequest[] = [];
  for (let i = 0; i < size; i++) {
    let r = rnd() * 100;
    const category = categories.find(([, share]) => (r -= share) < 0)?.[0] ?? 'valid';
    let request: GateRequest;
    switch (category) {
      case 'valid': {
        const tool = pick(rnd, allowed);
        // One call in ten arrives with the provider encoding of its name (`ext03__get_order`).
        const name = rnd() < 0.1 ? tool.name.replace('.', '__') : tool.name;
        request = { tool: name, arguments: validArgs(tool, rnd), deviceId: 'phone-1' };
        break;
      }
      case 'camel': {
        const tool = pick(rnd, allowed);
        const style = rnd() < 0.7 ? camel : kebab;
        const args = Object.fromEntries(Object.entries(validArgs(tool, rnd)).map(([k, v]) => [style(k), v]));
        request = { tool: tool.name, arguments: args, deviceId: 'phone-1' };
        break;
      }
      case 'screen':
        request = screenRequest(rnd);
        break;
      case 'high':
        request =
          rnd() < 0.6
            ? {
                tool: 'device.send_message',
                arguments: {
                  recipient: pick(rnd, ['Alice Martin', 'Bob Chen', '+351912345678']),
                  message_body: 'Running 10 minutes late.',
                },
                deviceId: 'phone-1',
              }
            : {
                tool: 'device.toggle_setting',
                arguments: { setting: pick(rnd, ['wifi', 'airplane_mode']), desired_state: 'off' },
                deviceId: 'phone-1',
              };
        break;
      case 'core': {
        const c = rnd();
        request =
          c < 0.4
            ? {
                tool: 'ormuz.search_tools',
                arguments: { query: pick(rnd, ['send text message', 'export report', 'cancel booking']) },
                deviceId: 'phone-1',
              }
            : c < 0.6
              ? { tool: 'ormuz.read_more', arguments: { continuation: 'c_7f3a9e' }, deviceId: 'phone-1' }
              : c < 0.8
                ? { tool: 'ormuz.check_call_status', arguments: { call_id: 'call_01HZX3' }, deviceId: 'phone-1' }
                : {
                    tool: 'ormuz.activate_tool',
                    arguments: { tool_name: pick(rnd, allowed).name },
                    deviceId: 'phone-1',
                  };
        break;
      }
      case 'invalid': {
        if (rnd() < 0.2) {
          // A tap without ref or x/y, or with a foreground package that is not one.
          request =
            rnd() < 0.5
              ? {
                  tool: 'device.tap',
                  arguments: { foreground_package: 'com.example.messages', target_text: 'Send' },
                  deviceId: 'phone-1',
                }
              : {
                  tool: 'device.tap',
                  arguments: { foreground_package: 'Messages app', ref: 'e4' },
                  deviceId: 'phone-1',
                };
        } else {
          const tool = pick(rnd, allowed);
          request = { tool: tool.name, arguments: invalidArgs(tool, rnd), deviceId: 'phone-1' };
        }
        break;
      }
      case 'denied': {
        const name = pick(rnd, denied);
        const tool = tools.find((t) => t.name === name);
        request = {
          tool: name,
          arguments: tool ? validArgs(tool, rnd) : { contact_names: ['Bob Chen'] },
          deviceId: 'phone-1',
        };
        break;
      }
      case 'unknown':
        request = { tool: unknownName(tools, rnd), arguments: { query: 'tomorrow' }, deviceId: 'phone-1' };
        break;
    }
    out.push({ category, request });
  }
  return out;
}
