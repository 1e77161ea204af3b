export { createActivities } from './create-activities.js';
export type { ActivityDependencies, KeelActivities } from './create-activities.js';
