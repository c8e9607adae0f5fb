// The policy gate's pure decision for one tool request (docs/decisions/0025-time-travel-and-what-if.md): policy decides
// every submit with it, and `ormuz whatif` re-runs it over past requests against candidate rules.
export * from './gate.js';
export { repeatedDenial, repeatedDenialMessage } from './denials.js';
export * from './screen-target.js';
export * from './taint.js';
