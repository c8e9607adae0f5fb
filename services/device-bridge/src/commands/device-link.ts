import type { SubmitFrameV1 } from '@ormuz/contracts';
import type { DeviceIdentity } from '../domain/device-credentials.js';

/**
 * How the dispatcher and the execution protocol reach connected devices (implemented over the WebSocket gateway, and
 * across replicas over NATS by DeviceLinkHost).
 */
export interface DeviceLink {
  isConnected(device: DeviceIdentity): boolean;
  /** Sends a submit frame; false when the device is not connected. */
  sendSubmit(device: DeviceIdentity, frame: Omit<SubmitFrameV1, 'v' | 'seq'>): boolean;
  sendCancel(device: DeviceIdentity, requestId: string, reason: string): void;
  /** Tells the device never to run the request; it honours it only while it holds no grant for it. */
  sendSeal(device: DeviceIdentity, requestId: string): void;
  /** How many more requests the device takes now (its flow-control window); 0 when not connected here. */
  room(device: DeviceIdentity): number;
  /** Asks the device what its journal knows about a request; the device never runs anything for it. */
  sendStatusQuery(device: DeviceIdentity, requestId: string): void;
}
