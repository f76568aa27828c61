/** The url may not be requested: the policy refuses its scheme or address (never worth a retry). */
export class OutboundRefusedError extends Error {
  override name = 'OutboundRefusedError';
}

/** An answer larger than the policy allows (retrying would read the same answer). */
export class OutboundLimitError extends Error {
  override name = 'OutboundLimitError';
}

/**
 * The policy's refusal or limit behind an error, if any: SDKs wrap what their fetch threw
 * ("Connection error." with a cause), and the reason must reach the task as it is.
 */
export function outboundStop(err: unknown): OutboundRefusedError | OutboundLimitError | undefined {
  let current: unknown = err;
  for (let depth = 0; current instanceof Error && depth < 5; depth++, current = current.cause) {
    if (current instanceof OutboundRefusedError || current instanceof OutboundLimitError) return current;
  }
  return undefined;
}
