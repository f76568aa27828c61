import { SETTINGS_CHECK_MS } from '../../src/db/settings-cache';

/**
 * Waits until a settings change made through the api (a limit, a budget, a price, a credential)
 * applies on every worker: each process keeps settings in memory and takes a change up for the
 * calls that start a second later (docs/performance.md, "Settings in memory"). Tests whose worker
 * is another process call it between the change and the runs it is meant for.
 */
export function settingsReachWorkers(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, SETTINGS_CHECK_MS + 200));
}
