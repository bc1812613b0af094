// Deterministic orchestration only: no I/O, clock or randomness here (lint enforces it).
export { healthProbeWorkflow } from './health-probe';
