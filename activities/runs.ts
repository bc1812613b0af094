export { createRunActivities } from '../engine';
