/**
 * Time travel: a point in a tenant's log, for queries that answer as things stood then (`policy.status`,
 * `model-loop.get`). `time`: the events recorded at or before that instant (RFC 3339); `seq`: the events up to and at
 * that stream sequence. A point in the future is refused (`as_of_in_future`): the log cannot say what will happen.
 */
import { fragments, OneOf, Struct, Type, type Static } from '../wire.js';

export const AsOfV1 = OneOf([Struct({ time: fragments.time }), Struct({ seq: Type.Integer({ minimum: 1 }) })]);
export type AsOfV1 = Static<typeof AsOfV1>;
