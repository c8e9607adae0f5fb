// A hand-driven device connection speaking the protocol frame by frame, for steps a well-behaved client never
// takes on its own (claiming after a seal, reporting for another device, dropping mid-call).
import { WebSocket } from 'ws';
import { DeviceFrameCodec, type DeviceFrame, type DeviceFrameDraft } from '@ormuz/contracts';

export class RawDevice {
  readonly frames: DeviceFrame[] = [];
  readonly codec = new DeviceFrameCodec();
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => this.frames.push(JSON.parse(data.toString('utf8')) as DeviceFrame));
    ws.on('close', () => {
      this.closed = true;
    });
    ws.on('error', () => undefined);
  }

  static async connect(url: string): Promise<RawDevice> {
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return new RawDevice(ws);
  }

  send(draft: DeviceFrameDraft): void {
    this.ws.send(this.codec.encode(draft));
  }

  hello(tenant: string, deviceId: string, token: string, bootId = 'boot-1'): void {
    this.send({ type: 'hello', device_id: deviceId, tenant, boot_id: bootId, protocol_version: 1, policy_version: null, token });
  }

  frame<T extends DeviceFrame['type']>(type: T, requestId?: string): Extract<DeviceFrame, { type: T }> | undefined {
    return this.frames.find(
      (f): f is Extract<DeviceFrame, { type: T }> =>
        f.type === type && (requestId === undefined || ('request_id' in f && f.request_id === requestId)),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const done = new Promise((resolve) => this.ws.once('close', resolve));
    this.ws.terminate();
    await done;
  }
}
