/** Every worker on a queue registers the same workflows and activities. */
export const DEFAULT_TASK_QUEUE = 'spur-runs';
