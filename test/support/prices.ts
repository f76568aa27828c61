import type { client } from './http';

type Http = ReturnType<typeof client>;

/**
 * What calls of `model` cost at its listed price (GET /api/usage/prices/…): each call priced on
 * its own and kept to the nano-dollar, as Spur records it; from the table, not typed-in numbers.
 */
export async function costAtListedPrice(
  http: Http,
  model: string,
  calls: readonly { input: number; output: number }[],
): Promise<number> {
  const res = await http.get(`/usage/prices/${model}`);
  if (res.status !== 200) throw new Error(`price of ${model}: ${res.status} ${res.text}`);
  const price = res.body as { input_usd_per_mtok: number; output_usd_per_mtok: number };
  const nano = calls.reduce(
    (sum, c) =>
      sum + Math.round(((c.input * price.input_usd_per_mtok + c.output * price.output_usd_per_mtok) / 1e6) * 1e9),
    0,
  );
  return nano / 1e9;
}
