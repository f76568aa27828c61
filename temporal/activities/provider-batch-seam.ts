import type { BatchAnswer } from '../../src/engine/provider-batch-plan';
import type { OutboundFetch } from '../../src/outbound/outbound-fetch';
import type { PriceBook } from '../../src/usage/price-book';

/** Thrown at a row's model call instead of sending it: the call goes out in the node's provider batch. */
export class HeldForProviderBatch extends Error {
  constructor() {
    super('Held for the provider batch');
    this.name = 'HeldForProviderBatch';
  }
}

/**
 * One execution of a batched node in a provider-batch round. Its first model request (a POST
 * through the node's outbound client) is not sent: without an answer it is kept as the body the
 * batch will carry; with the provider batch's answer, that answer is the reply; with a failed one,
 * it goes online. Any later request of the execution goes online as usual.
 */
export function providerBatchSeam(online: OutboundFetch, answer: BatchAnswer | undefined) {
  let first = true;
  let held: Record<string, unknown> | undefined;
  let fromBatch = false;
  const fetch: OutboundFetch = async (input, init) => {
    const post = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase() === 'POST';
    if (!first || !post) {
      fromBatch = false;
      return online(input, init);
    }
    first = false;
    if (answer?.ok) {
      fromBatch = true;
      return new Response(JSON.stringify(answer.body), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    }
    if (answer) return online(input, init);
    held = batchBody(init?.body);
    throw new HeldForProviderBatch();
  };
  return {
    fetch,
    /** The request body kept for the batch, once the node has tried to send it. */
    held: () => held,
    /** Prices the call just answered at the batch rate when the batch answered it. */
    prices: (book: PriceBook): PriceBook => ({
      ...book,
      price: (calls) => book.price(calls, fromBatch ? 'batch' : 'online'),
    }),
  };
}

/** The body as a batch line carries it: JSON, never streamed (a batch answers whole). */
function batchBody(body: unknown): Record<string, unknown> {
  const text = typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body).toString('utf8') : '{}';
  const parsed: unknown = JSON.parse(text);
  const {
    stream: _stream,
    stream_options: _options,
    ...rest
  } = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  return rest;
}
