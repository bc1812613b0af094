export { createRunActivities } from '../engine/runs';
