/**
 * What follows each committed batch of the executions projection, outside its transaction (the projection only
 * projects): the devices that may hold the submit of a call the batch sealed are told (`seal` frame, wherever they
 * are connected), the rows the batch left ready go to the dispatcher with the state the batch holds, and when some
 * are for devices not connected here the other replicas are told to look (`<ns>.bridge.ready`).
 *
 * An after-commit reactor rather than a ReactionRunner with a checkpoint of its own: what it does is best effort by
 * design. A seal frame lost in a crash is an early stop that did not happen (the seal is on the log, so the device's
 * claim loses anyway); a dispatch lost in a crash is found again in the table (by the reconnect and the passes). A
 * second consumer of the calls stream would read every event again to learn what the projection already knows.
 */
import { Injectable } from '@nestjs/common';
import { DeviceDispatcher } from '../commands/device-dispatcher.js';
import type { CommittedExecutions } from '../projections/executions.projection.js';
import { DeviceLinkHost } from '../transport/device-link.host.js';

@Injectable()
export class ExecutionsReactor {
  constructor(
    private readonly dispatcher: DeviceDispatcher,
    private readonly link: DeviceLinkHost,
  ) {}

  /** This replica starts projecting: the batches it commits may not follow the ones it folded before. */
  leading(): void {
    this.dispatcher.leading();
  }

  /** A batch of the executions projection committed. */
  committed(batch: CommittedExecutions): void {
    for (const s of batch.sealed) this.link.sendSeal({ tenant: s.tenant, deviceId: s.device_id }, s.request_id);
    const elsewhere = this.dispatcher.committed(batch);
    if (elsewhere > 0) this.link.routes.announceReady();
  }
}
