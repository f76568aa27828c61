// The batch benches' client: a tiny JSON/FormData client for the api, a CSV dataset upload, and a
// batch run from its start to its end (polling the parent's status), timed.

/** The few fields the bench reads from api replies. */
interface Body {
  id: string;
  status: string;
  message: string | null;
}

interface Reply {
  status: number;
  body: Body;
}

/** `headers` go with every request (an API key: `{ authorization: 'Bearer …' }`). */
export function api(base: string, headers: Record<string, string> = {}) {
  const call = async (method: string, p: string, body?: unknown): Promise<Reply> => {
    const init: RequestInit = { method, headers };
    if (body instanceof FormData) init.body = body;
    else if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { ...headers, 'content-type': 'application/json' };
    }
    const res = await fetch(`${base}${p}`, init);
    const text = await res.text();
    return {
      status: res.status,
      body: (text && (res.headers.get('content-type') ?? '').startsWith('application/json')
        ? JSON.parse(text)
        : {}) as Body,
    };
  };
  return { get: (p: string) => call('GET', p), post: (p: string, body?: unknown) => call('POST', p, body) };
}
export type Api = ReturnType<typeof api>;

/** A CSV dataset of `rows` rows (`x`, `k`); its id. */
export async function uploadDataset(http: Api, name: string, rows: number): Promise<string> {
  const csv = ['x,k', ...Array.from({ length: rows }, (_, i) => `value ${i},${i % 3}`)].join('\n');
  const fd = new FormData();
  fd.append('file', new Blob([csv], { type: 'text/csv' }), `${name}.csv`);
  const res = await http.post(`/ds/?name=${encodeURIComponent(name)}`, fd);
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** A batch over the dataset, from its start until it ended COMPLETED (anything else throws). */
export async function runBatch(
  http: Api,
  workflowId: string,
  datasetId: string,
  miniBatchSize: number,
): Promise<{ runId: string; seconds: number }> {
  const t0 = performance.now();
  const res = await http.post(`/wf/${workflowId}/start_batch_run/`, {
    dataset_id: datasetId,
    mini_batch_size: miniBatchSize,
  });
  if (res.status !== 200) throw new Error(`start_batch_run: ${res.status} ${JSON.stringify(res.body)}`);
  for (;;) {
    const run = (await http.get(`/run/${res.body.id}/status/`)).body;
    if (!['PENDING', 'RUNNING'].includes(run.status)) {
      if (run.status !== 'COMPLETED') throw new Error(`batch ${run.id} ended ${run.status}: ${run.message}`);
      return { runId: run.id, seconds: (performance.now() - t0) / 1000 };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
