import { z } from '../../zod';

/** What a call to a WaitForCallbackNode's URL is answered, besides errors thrown as usual (404, 413, 422). */
export type CallbackAnswer =
  | { status: 200; body: { accepted: true; run_id: string; node_id: string } }
  | { status: 401 | 410; body: { detail: string } };

export const CallbackAccepted = z
  .object({
    accepted: z.literal(true),
    run_id: z.string(),
    node_id: z.string().openapi({ description: 'The WaitForCallbackNode the body completes' }),
  })
  .openapi('InboundCallbackAccepted');

export const CallbackTokenParams = z.object({
  token: z.string().openapi({ description: "The callback's token, from callback_url(…) in a template of the run" }),
});

export const CallbackBody = z.record(z.string(), z.unknown()).openapi({ description: 'Any JSON object' });
