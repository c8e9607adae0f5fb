/** A simulated phone that counts what it really runs, per call id: the ground truth of "run twice". */
import type { JsonValue } from '@ormuz/contracts';
import { SimulatedDevice, type ExecutionContext, type ToolArguments } from '@ormuz/device-sdk';

export class CountingDevice extends SimulatedDevice {
  /** Runs by call id; shared by every phone of a fleet when given. */
  constructor(
    readonly runs = new Map<string, number>(),
    options?: ConstructorParameters<typeof SimulatedDevice>[0],
  ) {
    super(options);
  }

  override execute(
    tool: string,
    args: ToolArguments,
    context?: Parameters<SimulatedDevice['execute']>[2],
  ): Promise<JsonValue> {
    // The device client passes the whole execution context, whose call id says which call this run is.
    const callId = (context as Partial<ExecutionContext> | undefined)?.callId ?? '(no call id)';
    this.runs.set(callId, (this.runs.get(callId) ?? 0) + 1);
    return super.execute(tool, args, context);
  }
}
