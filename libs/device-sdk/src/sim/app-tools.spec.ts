import { SIM_PACKAGES } from './sim-apps.js';
import { SimulatedDevice } from './simulated-device.js';

describe('SimulatedDevice', () => {
  it('names the installed apps when asked to open a missing one', async () => {
    await expect(
      new SimulatedDevice().execute('device.open_app', { package_name: 'com.example.nope' }),
    ).rejects.toMatchObject({
      code: 'app_not_installed',
      message: expect.stringMatching(/com\.example\.bank/),
    });
  });
});

describe('device.toggle_setting', () => {
  it('sets the desired state and reports an already-set setting as unchanged', async () => {
    const device = new SimulatedDevice();
    expect(await device.execute('device.toggle_setting', { setting: 'wifi', desired_state: 'on' })).toEqual({
      setting: 'wifi',
      previous_state: 'on',
      current_state: 'on',
      changed: false,
    });
    expect(await device.execute('device.toggle_setting', { setting: 'bluetooth', desired_state: 'on' })).toEqual({
      setting: 'bluetooth',
      previous_state: 'off',
      current_state: 'on',
      changed: true,
    });
    expect(await device.execute('device.toggle_setting', { setting: 'bluetooth', desired_state: 'on' })).toMatchObject({
      changed: false,
    });
    expect(device.settings).toMatchObject({ wifi: true, bluetooth: true });
    expect(device.targetPackage('device.toggle_setting', {})).toBe(SIM_PACKAGES.settings);
  });

  it('refuses a setting or state it does not know', async () => {
    const device = new SimulatedDevice();
    await expect(
      device.execute('device.toggle_setting', { setting: 'nfc', desired_state: 'on' }),
    ).rejects.toMatchObject({
      code: 'invalid_arguments',
      message: 'setting must be one of wifi, bluetooth, airplane_mode, location, not "nfc".',
    });
    await expect(
      device.execute('device.toggle_setting', { setting: 'wifi', desired_state: 'toggle' }),
    ).rejects.toMatchObject({ code: 'invalid_arguments' });
  });
});
