import { z } from 'zod';
import { extendConfig } from '../base-config.js';
import { WAIT_MAX_SECONDS, workflowWaitedNode } from './wait-limits.js';

const config = extendConfig({
  /** How long the run waits for the call. */
  timeout_seconds: z.number().positive().max(WAIT_MAX_SECONDS).default(3600),
  /** Past the timeout: fail the node (and the run), or complete it with `{"timed_out": true}`. */
  on_timeout: z.enum(['fail', 'continue']).default('fail'),
  /**
   * When not empty, a call must carry `X-Spur-Signature: sha256=<hex HMAC-SHA256 of the raw body>`
   * keyed with it (401 otherwise).
   */
  secret: z.string().max(500).default(''),
});

export const waitForCallbackConfig = config;

/**
 * Waits until something outside calls the node's URL (`{{ callback_url("<node id>") }}` in any
 * template of the run), and outputs the call's JSON body. The workflow runs it; `execute` is
 * reached only where no workflow waits.
 */
export const waitForCallbackNode = workflowWaitedNode({
  name: 'WaitForCallbackNode',
  displayName: 'WaitForCallback',
  description: "Waits for an outside system to call the node's callback URL; outputs the call's JSON body.",
  acronym: 'WCB',
  config,
});
