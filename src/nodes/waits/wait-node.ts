import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { WAIT_MAX_SECONDS, workflowWaitedNode } from './wait-limits.js';

const config = extendConfig({
  /** How long to wait, when `until` is empty. */
  seconds: z.number().min(0).max(WAIT_MAX_SECONDS).nullable().default(60),
  /**
   * A time to wait until (ISO 8601, with its zone), a template over the node's inputs. Wins over
   * `seconds` when not empty; a time already past does not wait.
   */
  until: z.string().max(2000).default(''),
});

export const waitNodeConfig = config;

/**
 * Waits durably (a Temporal timer in the run's workflow: no worker slot is held, and the wait
 * survives restarts of every process), then hands its input on. The workflow runs it; `execute`
 * is reached only where no workflow waits.
 */
export const waitNode = workflowWaitedNode({
  name: 'WaitNode',
  displayName: 'Wait',
  description: 'Waits for a number of seconds, or until a time, then passes its input on.',
  acronym: 'WT',
  config,
});
