/** The apps and settings tools of the simulated device: `device.open_app` and `device.toggle_setting`. */
import type { JsonValue } from '@ormuz/contracts';
import { DeviceToolError, type ToolArguments } from '../device-executor.js';
import { APPS, SETTING_LABELS, installedPackages, type SimSetting } from './sim-apps.js';
import { oneOf, requiredText } from './sim-arguments.js';
import type { SimState } from './sim-state.js';

export function openApp(s: SimState, args: ToolArguments): JsonValue {
  const pkg = requiredText(args, 'package_name', 'the app package name, e.g. com.example.messages');
  const app = APPS[pkg];
  if (!app || app.hidden) {
    throw new DeviceToolError(
      'app_not_installed',
      `${pkg} is not installed. Installed apps: ${installedPackages().join(', ')}.`,
    );
  }
  const changed = s.fg?.package !== pkg || s.fg.screen !== app.home;
  if (changed) s.show({ package: pkg, screen: app.home });
  return { succeeded: true, foreground_package: pkg, screen: app.home, changed, settled: true };
}

/** Sets a setting to a state rather than flipping it, so a repeated call changes nothing. */
export function toggleSetting(s: SimState, args: ToolArguments): JsonValue {
  const setting = oneOf(args, 'setting', Object.keys(SETTING_LABELS) as SimSetting[]);
  const wanted = oneOf(args, 'desired_state', ['on', 'off'] as const) === 'on';
  const previous = s.settings[setting];
  if (previous !== wanted) {
    s.settings[setting] = wanted;
    s.version += 1;
  }
  return {
    setting,
    previous_state: previous ? 'on' : 'off',
    current_state: wanted ? 'on' : 'off',
    changed: previous !== wanted,
  };
}
