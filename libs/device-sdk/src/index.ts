export {
  DEFAULT_DENIED_PACKAGES,
  DeviceClient,
  DeviceToolError,
  type BackoffOptions,
  type DeviceClientLogger,
  type DeviceClientOptions,
  type DeviceExecutor,
  type ExecutionContext,
  type TargetPackageResolver,
  type ToolArguments,
} from './device-client.js';
export {
  DeviceJournal,
  JournalCorruptError,
  JournalLockedError,
  JournalTransitionError,
  type Admission,
  type DeviceJournalOptions,
  type JournalEntry,
  type JournalOutcome,
  type JournalState,
  type JournalSubmit,
} from './journal.js';
export {
  SIM_PACKAGES,
  SIM_SCREEN,
  SIM_TOOLS,
  SimulatedDevice,
  type SimBounds,
  type SimContact,
  type SimForeground,
  type SimMessage,
  type SimObservedElement,
  type SimSetting,
  type SimulatedDeviceOptions,
} from './sim/simulated-device.js';
export {
  runSimulatedDevice,
  type RunSimulatedDeviceOptions,
  type SimulatedDeviceHandle,
} from './sim/run-simulated-device.js';
