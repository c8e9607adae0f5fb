import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { contextFilter, ToolCallEventType, type OrmuzEvent } from '@ormuz/contracts';
import { streamName, type AppliedEvent, type Projection } from '@ormuz/event-log';
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
    tables: [{ name: 'screen_calls' }, { name: 'device_screens' }],
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
    writeBatch: (db, items, moved) => writeBatch(db, items, moved),
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

// ---------------------------------------------------------------------------------------------------------------
// A batch at a time: what `apply` does event after event, folded in memory, then written in one statement.

type ScreenCall = DeviceScreensDB['screen_calls'];
type ScreenRow = Omit<DeviceScreensDB['device_screens'], 'elements' | 'updated_at'> & {
  elements: unknown[];
  updated_at: string;
};

/** The events after which `apply` looks at a call's screen row: an outcome, a start, or the end of the call. */
const LOOKS_UP: ReadonlySet<string> = new Set([ToolCallEventType.Started, ToolCallEventType.OutcomeUnknown, ...ENDED]);

const key = (tenant: string, id: string) => `${tenant}/${id}`;

/** The call a screen tool's request records, or undefined when `apply` records none. */
function requestedCall(event: OrmuzEvent): ScreenCall | undefined {
  const data = event.data as {
    call_id: string;
    tool?: string;
    payload?: string;
    target?: { device_id: string } | null;
  };
  if (!data.tool || !SCREEN_TOOLS.has(data.tool) || !data.target) return undefined;
  let continued = false;
  try {
    continued = typeof (JSON.parse(data.payload ?? '{}') as { continuation?: unknown }).continuation === 'string';
  } catch {
    // as in `apply`
  }
  return { tenant: event.tenant, call_id: data.call_id, device_id: data.target.device_id, tool: data.tool, continued };
}

/**
 * The rows of the calls and devices a batch needs from the table, in one query: the calls its later events name that
 * it did not request itself, and the devices of every call it may change a screen for. Nothing to read (a batch of
 * requests and their decisions, the gate's every submit): no query.
 */
async function readState(
  db: Kysely<DeviceScreensDB>,
  items: readonly AppliedEvent[],
): Promise<{ calls: Map<string, ScreenCall>; screens: Map<string, ScreenRow> }> {
  const inBatch = new Map<string, ScreenCall>();
  const callKeys = new Map<string, [string, string]>();
  const devices = new Map<string, [string, string]>();
  for (const { event } of items) {
    if (event.type === ToolCallEventType.Requested) {
      const call = requestedCall(event);
      if (call) inBatch.set(key(call.tenant, call.call_id), call);
      continue;
    }
    if (!LOOKS_UP.has(event.type) && event.type !== ToolCallEventType.Succeeded) continue;
    const callId = (event.data as { call_id: string }).call_id;
    const known = inBatch.get(key(event.tenant, callId));
    if (known) devices.set(key(known.tenant, known.device_id), [known.tenant, known.device_id]);
    else callKeys.set(key(event.tenant, callId), [event.tenant, callId]);
  }
  const calls = new Map<string, ScreenCall>();
  const screens = new Map<string, ScreenRow>();
  if (callKeys.size === 0 && devices.size === 0) return { calls, screens };
  const pairs = (m: Map<string, [string, string]>) => [
    [...m.values()].map((p) => p[0]),
    [...m.values()].map((p) => p[1]),
  ];
  const [callTenants, callIds] = pairs(callKeys);
  const [deviceTenants, deviceIds] = pairs(devices);
  const { rows } = await sql<{ calls: ScreenCall[]; screens: ScreenRow[] }>`
    with wanted as (
      select c.* from ${sql.table(`${POLICY_SCHEMA}.screen_calls`)} c
      where (c.tenant, c.call_id) in (select * from unnest(${callTenants}::text[], ${callIds}::text[])))
    select
      (select coalesce(json_agg(w), '[]') from wanted w) as calls,
      (select coalesce(json_agg(s), '[]') from ${sql.table(`${POLICY_SCHEMA}.device_screens`)} s
        where (s.tenant, s.device_id) in (
          select * from unnest(${deviceTenants}::text[], ${deviceIds}::text[])
          union select tenant, device_id from wanted)) as screens`.execute(db);
  for (const c of rows[0]!.calls) calls.set(key(c.tenant, c.call_id), c);
  for (const s of rows[0]!.screens) screens.set(key(s.tenant, s.device_id), { ...s, last_seq: Number(s.last_seq) });
  return { calls, screens };
}

/** What a batch leaves: the calls recorded or forgotten, and the devices' rows it changed. */
interface Folded {
  /** Calls requested in the batch and still open at its end (inserted, `do nothing` on an existing row). */
  readonly open: ScreenCall[];
  /** Calls the batch ended (deleted). */
  readonly ended: { tenant: string; call_id: string }[];
  /** Each changed device's row, as the batch leaves it. */
  readonly screens: ScreenRow[];
}

/** Applies the batch's events in stream order to the rows read (see `apply`, which it follows step by step). */
function fold(items: readonly AppliedEvent[], calls: Map<string, ScreenCall>, screens: Map<string, ScreenRow>): Folded {
  const inserted = new Map<string, ScreenCall>();
  const ended = new Map<string, { tenant: string; call_id: string }>();
  const changed = new Set<string>();
  for (const { event, seq } of items) {
    const data = event.data as { call_id: string; result?: unknown };
    if (event.type === ToolCallEventType.Requested) {
      const call = requestedCall(event);
      if (!call) continue;
      const k = key(call.tenant, call.call_id);
      if (calls.has(k)) continue; // recorded already: `do nothing`
      calls.set(k, call);
      inserted.set(k, call);
      ended.delete(k);
      continue;
    }
    const k = key(event.tenant, data.call_id);
    const call = calls.get(k);
    if (!call) continue;
    const d = key(call.tenant, call.device_id);
    const before = screens.get(d);
    if (event.type === ToolCallEventType.Succeeded && call.tool === OBSERVE && isObserveResult(data.result)) {
      const result = data.result;
      const merges =
        call.continued &&
        before &&
        before.changed_by === null &&
        before.foreground_package === result.foreground_package &&
        before.screen === result.screen;
      if (!before || before.last_seq <= seq) {
        screens.set(d, {
          tenant: call.tenant,
          device_id: call.device_id,
          foreground_package: result.foreground_package,
          screen: result.screen,
          elements: merges ? [...before.elements, ...result.elements] : result.elements,
          observed_call_id: call.call_id,
          changed_by: null,
          last_seq: seq,
          updated_at: event.time,
        });
        changed.add(d);
      }
    } else if (
      call.tool !== OBSERVE &&
      before &&
      before.last_seq <= seq &&
      (event.type === ToolCallEventType.Started ||
        event.type === ToolCallEventType.Succeeded ||
        event.type === ToolCallEventType.OutcomeUnknown)
    ) {
      screens.set(d, { ...before, changed_by: before.changed_by ?? call.tool, last_seq: seq, updated_at: event.time });
      changed.add(d);
    }
    if (ENDED.has(event.type)) {
      calls.delete(k);
      inserted.delete(k);
      ended.set(k, { tenant: event.tenant, call_id: data.call_id });
    }
  }
  return {
    open: [...inserted.values()],
    ended: [...ended.values()],
    screens: [...changed].map((d) => screens.get(d)!),
  };
}

/** The batch's writes in one statement, each conditioned on the checkpoint's move (`moved`). */
function writeStatement(f: Folded, moved: RawBuilder<unknown>): RawBuilder<{ moved: number }> {
  const ctes = [sql`moved as (${moved})`];
  const calls = sql.table(`${POLICY_SCHEMA}.screen_calls`);
  if (f.ended.length > 0) {
    ctes.push(sql`ended as (
      delete from ${calls} x
      using unnest(${f.ended.map((c) => c.tenant)}::text[], ${f.ended.map((c) => c.call_id)}::text[]) as c(tenant, call_id)
      where x.tenant = c.tenant and x.call_id = c.call_id and exists (select from moved))`);
  }
  if (f.open.length > 0) {
    const col = <K extends keyof ScreenCall>(k: K) => f.open.map((c) => c[k]);
    ctes.push(sql`opened as (
      insert into ${calls} (tenant, call_id, device_id, tool, continued)
      select * from unnest(${col('tenant')}::text[], ${col('call_id')}::text[], ${col('device_id')}::text[],
        ${col('tool')}::text[], ${col('continued')}::boolean[])
      where exists (select from moved)
      on conflict (tenant, call_id) do nothing)`);
  }
  if (f.screens.length > 0) {
    const col = <K extends keyof ScreenRow>(k: K) => f.screens.map((s) => s[k]);
    ctes.push(sql`screens as (
      insert into ${sql.table(`${POLICY_SCHEMA}.device_screens`)} as x (tenant, device_id, foreground_package, screen,
        elements, observed_call_id, changed_by, last_seq, updated_at)
      select * from unnest(${col('tenant')}::text[], ${col('device_id')}::text[], ${col('foreground_package')}::text[],
        ${col('screen')}::text[], ${f.screens.map((s) => JSON.stringify(s.elements))}::jsonb[],
        ${col('observed_call_id')}::text[], ${col('changed_by')}::text[], ${col('last_seq')}::bigint[],
        ${col('updated_at')}::timestamptz[])
      where exists (select from moved)
      on conflict (tenant, device_id) do update set foreground_package = excluded.foreground_package,
        screen = excluded.screen, elements = excluded.elements, observed_call_id = excluded.observed_call_id,
        changed_by = excluded.changed_by, last_seq = excluded.last_seq, updated_at = excluded.updated_at
      where x.last_seq <= excluded.last_seq)`);
  }
  return sql<{ moved: number }>`with ${sql.join(ctes, sql`, `)} select count(*)::int as moved from moved`;
}

/**
 * Writes a batch and moves the checkpoint in one statement, after at most one read (the rows of calls and devices the
 * batch's later events concern, none for a batch of requests and decisions): two round trips at most instead of a
 * transaction's begin, move, a read or a write per event, and commit. The read needs no transaction: these rows are
 * only written by this read model with its checkpoint's move, so if they changed since, so did the checkpoint, and the
 * statement writes nothing.
 */
async function writeBatch(
  db: Kysely<DeviceScreensDB>,
  items: readonly AppliedEvent[],
  moved: RawBuilder<unknown>,
): Promise<boolean> {
  const { calls, screens } = await readState(db, items);
  const { rows } = await writeStatement(fold(items, calls, screens), moved).execute(db);
  return rows[0]?.moved === 1;
}
