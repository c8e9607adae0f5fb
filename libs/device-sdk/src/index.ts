export {
  DeviceClient,
  type BackoffOptions,
  type DeviceClientCloseOptions,
  type DeviceClientLogger,
  type DeviceClientOptions,
} from './device-client.js';
export {
  DeviceToolError,
  type DeviceExecutor,
  type ExecutionContext,
  type TargetPackageResolver,
  type ToolArguments,
} from './device-executor.js';
export { type ProtocolStep, type ProtocolStepHook } from './execution-protocol.js';
export { DEFAULT_DENIED_PACKAGES } from './package-policy.js';
export { judgedTargetRefusal, type ActingOn } from './judged-target.js';
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
  NODE_SCHEDULER,
  TimerWheel,
  type CancelTimer,
  type DeviceScheduler,
  type TimerWheelOptions,
} from './scheduler.js';
export {
  SIM_PACKAGES,
  SIM_SCREEN,
  type SimBounds,
  type SimContact,
  type SimContactSkipReason,
  type SimForeground,
  type SimKey,
  type SimMessage,
  type SimNotification,
  type SimObservedElement,
  type SimReceivedMessage,
  type SimSetting,
  type SimTransfer,
} from './sim/sim-apps.js';
export { SIM_TOOLS, SimulatedDevice, type SimulatedDeviceOptions } from './sim/simulated-device.js';
export { SimFaultKnobs, type SimFaultEvent, type SimFaultName, type SimFaultSettings } from './sim/sim-faults.js';
export {
  runSimulatedDevice,
  type RunSimulatedDeviceOptions,
  type SimulatedDeviceHandle,
} from './sim/run-simulated-device.js';
export {
  runSimulatedFleet,
  type RunSimulatedFleetOptions,
  type SimToken,
  type SimulatedFleet,
} from './sim/simulated-fleet.js';
