import { sql, type Transaction } from 'kysely';
import { contextFilter, ToolCallEventType, type OrmuzEvent } from '@ormuz/contracts';
import { streamName, type Projection } from '@ormuz/event-log';
import { POLICY_SCHEMA } from '../persistence/migrations.js';

/** Name (and checkpoint key) of the projection; the repository waits on its checkpoint. */
export const DEVICE_SCREENS_PROJECTION = 'policy_device_screens';

export interface DeviceScreensDB {
  screen_calls: { tenant: string; call_id: string; device_id: string; tool: string; continued: boolean };
  device_screens: {
    tenant: string;
    device_id: string;
    foreground_package: string;
    screen: string;
    elements: string;
    observed_call_id: string;
    changed_by: string | null;
    last_seq: number;
    updated_at: Date;
  };
}

const OBSERVE = 'device.screen_observe';
/** Device tools that read the screen (observe) or may change what it shows. */
const SCREEN_TOOLS = new Set([
  OBSERVE,
  'device.tap',
  'device.type_text',
  'device.swipe',
  'device.press_key',
  'device.open_app',
  'device.toggle_setting',
  'device.send_message',
  'device.delete_contacts_verified',
]);
/** Events after which a call is over for this read model: nothing it does can change the screen any more. */
const ENDED: ReadonlySet<string> = new Set([
  ToolCallEventType.Succeeded,
  ToolCallEventType.Failed,
  ToolCallEventType.Refused,
  ToolCallEventType.Sealed,
  ToolCallEventType.Denied,
  ToolCallEventType.Expired,
]);

interface ObserveResult {
  foreground_package: string;
  screen: string;
  elements: unknown[];
}

function isObserveResult(value: unknown): value is ObserveResult {
  const r = value as Partial<ObserveResult> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.foreground_package === 'string' &&
    typeof r.screen === 'string' &&
    Array.isArray(r.elements)
  );
}

/**
 * Builds `policy.device_screens`: each device's latest `device.screen_observe` result (the pages of one screen merged
 * when read with a continuation), and `changed_by`, the first screen-changing tool that started, ran or may have run
 * on the device after it. Policy resolves a tap by coordinates or by ref without text against it.
 */
export function deviceScreensProjection(namespace: string): Projection<DeviceScreensDB> {
  return {
    name: DEVICE_SCREENS_PROJECTION,
    schema: POLICY_SCHEMA,
    stream: streamName(namespace, 'calls'),
    filterSubject: contextFilter(namespace, 'calls'),
    async apply(trx: Transaction<DeviceScreensDB>, event: OrmuzEvent, seq: number) {
      const t = trx.withSchema(POLICY_SCHEMA);
      const data = event.data as {
        call_id: string;
        tool?: string;
        payload?: string;
        target?: { device_id: string } | null;
        result?: unknown;
      };
      if (event.type === ToolCallEventType.Requested) {
        if (!data.tool || !SCREEN_TOOLS.has(data.tool) || !data.target) return;
        let continued = false;
        try {
          continued = typeof (JSON.parse(data.payload ?? '{}') as { continuation?: unknown }).continuation === 'string';
        } catch {
          // Recorded bytes are canonical JSON; anything else reads as a first page.
        }
        await t
          .insertInto('screen_calls')
          .values({
            tenant: event.tenant,
            call_id: data.call_id,
            device_id: data.target.device_id,
            tool: data.tool,
            continued,
          })
          .onConflict((oc) => oc.columns(['tenant', 'call_id']).doNothing())
          .execute();
        return;
      }
      const call = await t
        .selectFrom('screen_calls')
        .selectAll()
        .where('tenant', '=', event.tenant)
        .where('call_id', '=', data.call_id)
        .executeTakeFirst();
      if (!call) return;
      const observed =
        event.type === ToolCallEventType.Succeeded && call.tool === OBSERVE && isObserveResult(data.result);
      if (observed) {
        await recordObservation(trx, event, seq, call, data.result as ObserveResult);
      } else if (
        call.tool !== OBSERVE &&
        (event.type === ToolCallEventType.Started ||
          event.type === ToolCallEventType.Succeeded ||
          event.type === ToolCallEventType.OutcomeUnknown)
      ) {
        await t
          .updateTable('device_screens')
          .set({ changed_by: sql`coalesce(changed_by, ${call.tool})`, last_seq: seq, updated_at: new Date(event.time) })
          .where('tenant', '=', event.tenant)
          .where('device_id', '=', call.device_id)
          // `<=`: the events of one message share its sequence; the checkpoint applies a message once.
          .where('last_seq', '<=', seq)
          .execute();
      }
      if (ENDED.has(event.type)) {
        await t
          .deleteFrom('screen_calls')
          .where('tenant', '=', event.tenant)
          .where('call_id', '=', data.call_id)
          .execute();
      }
    },
    async reset(trx) {
      await trx.withSchema(POLICY_SCHEMA).deleteFrom('device_screens').execute();
      await trx.withSchema(POLICY_SCHEMA).deleteFrom('screen_calls').execute();
    },
  };
}

async function recordObservation(
  trx: Transaction<DeviceScreensDB>,
  event: OrmuzEvent,
  seq: number,
  call: DeviceScreensDB['screen_calls'],
  result: ObserveResult,
): Promise<void> {
  const t = trx.withSchema(POLICY_SCHEMA);
  let elements = result.elements;
  if (call.continued) {
    // A further page of the same, unchanged screen adds to the pages read before; any other page starts afresh.
    const before = await t
      .selectFrom('device_screens')
      .select(['foreground_package', 'screen', 'elements', 'changed_by'])
      .where('tenant', '=', event.tenant)
      .where('device_id', '=', call.device_id)
      .executeTakeFirst();
    if (
      before &&
      before.changed_by === null &&
      before.foreground_package === result.foreground_package &&
      before.screen === result.screen
    ) {
      const earlier = (
        typeof before.elements === 'string' ? JSON.parse(before.elements) : before.elements
      ) as unknown[];
      elements = [...earlier, ...result.elements];
    }
  }
  const row = {
    foreground_package: result.foreground_package,
    screen: result.screen,
    elements: JSON.stringify(elements),
    observed_call_id: call.call_id,
    changed_by: null,
    last_seq: seq,
    updated_at: new Date(event.time),
  };
  await t
    .insertInto('device_screens')
    .values({ tenant: event.tenant, device_id: call.device_id, ...row })
    .onConflict((oc) =>
      oc.columns(['tenant', 'device_id']).doUpdateSet(row).where('device_screens.last_seq', '<=', seq),
    )
    .execute();
}
