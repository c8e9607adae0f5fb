import { readFileSync } from 'node:fs';
import {
  DEVICE_TO_SERVER_FRAME_TYPES,
  deviceFrameSchemaName,
  parseDeviceFrame,
  SERVER_TO_DEVICE_FRAME_TYPES,
  type DeviceFrameType,
} from './device-protocol.js';
import { assertValid } from './schema-registry.js';

/** docs/device-protocol.md describes the frames; their declarations in device-protocol.ts decide. */
const doc = readFileSync(new URL('../../../docs/device-protocol.md', import.meta.url), 'utf8');

/** Every ```json block of the document, with the line it starts on and the frame type it names. */
const examples = [...doc.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((m) => ({
  line: doc.slice(0, m.index).split('\n').length,
  text: m[1]!,
  type: String((JSON.parse(m[1]!) as { type?: unknown }).type),
}));

const frameTypes = new Set<string>([...DEVICE_TO_SERVER_FRAME_TYPES, ...SERVER_TO_DEVICE_FRAME_TYPES]);

describe('the device protocol document', () => {
  it('shows an example of every frame type', () => {
    const shown = new Set(examples.map((e) => e.type));
    expect([...frameTypes].filter((t) => !shown.has(t))).toEqual([]);
  });

  it.each(examples.map((e) => [e.type, e.line, e.text] as const))(
    'has a whole %s frame (line %i) that passes the schema of its type, and parses as received',
    (_type, _line, text) => {
      const frame = JSON.parse(text) as { type?: unknown };
      expect(frameTypes).toContain(frame.type);
      expect(() => assertValid(deviceFrameSchemaName(frame.type as DeviceFrameType), frame)).not.toThrow();
      // What a peer runs on a received frame: also the version, and a submit's payload against its hash.
      expect(parseDeviceFrame(text)).toEqual(frame);
    },
  );
});
