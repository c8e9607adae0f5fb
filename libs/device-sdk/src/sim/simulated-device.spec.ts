import { SIM_PACKAGES } from './sim-apps.js';
import { SimulatedDevice } from './simulated-device.js';

describe('SimulatedDevice', () => {
  it('tells the device policy which app each action targets', () => {
    const device = new SimulatedDevice({ foreground: null });
    expect(device.targetPackage('device.tap', { ref: 'e1' })).toBeNull();
    expect(device.targetPackage('device.screen_observe', {})).toBeUndefined();
    expect(device.targetPackage('device.open_app', { package_name: SIM_PACKAGES.bank })).toBe(SIM_PACKAGES.bank);
    device.setForeground({ package: SIM_PACKAGES.bank, screen: 'accounts' });
    expect(device.targetPackage('device.tap', { ref: 'e1' })).toBe(SIM_PACKAGES.bank);
  });

  it('fails an unknown tool with the list of real ones', async () => {
    await expect(new SimulatedDevice().execute('device.reboot', {})).rejects.toMatchObject({
      code: 'unknown_tool',
      message: expect.stringMatching(/device\.screen_observe, device\.tap/),
    });
  });
});
