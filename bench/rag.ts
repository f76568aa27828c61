// Knowledge-base benchmark: ingest and index BENCH_RAG_CHUNKS chunks (default 10 000:
// 20 files of 500 chunks) on the bench's own stack (api and worker processes, Temporal dev server,
// FerretDB, the embedded LanceDB store), with embeddings from a local OpenAI-compatible server
// (hashed bag of words, 1536 dimensions). Reports chunks/s for the ingest (parse + chunk + store)
// and the index build (embed + upsert + full-text and HNSW indexes), the peak RSS of api and worker, and retrieval latency
// (p50/p95 over BENCH_RAG_QUERIES sequential queries) at that size. Not part of `npm test`.
// Usage: npx tsx bench/rag.ts
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../scripts/lib/tools';
import { createLanceStore } from '../src/rag/lance-store';
import { bagOfWordsVector, startFakeEmbeddingsServer } from '../test/support/fake-embeddings-server';
import { type JsonClient, jsonClient } from './lib/http';
import { type Stack, startStack } from './lib/stack';
import { percentileOf } from './lib/stats';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const FILES = 20;
const settings = {
  chunks: num('BENCH_RAG_CHUNKS', 10_000),
  queries: num('BENCH_RAG_QUERIES', 200),
  annMinRows: num('BENCH_RAG_ANN_MIN_ROWS', 5000),
};
const perFile = Math.ceil(settings.chunks / FILES);
const TEXT_PROCESSING = {
  chunk_token_size: 60,
  min_chunk_size_chars: 50,
  min_chunk_length_to_embed: 5,
  embeddings_batch_size: 128,
  max_num_chunks: perFile,
  use_vision_model: false,
};

/** Enough text that every file yields `perFile` chunks (the rest is cut by max_num_chunks). */
function fileText(k: number): string {
  const lines: string[] = [];
  for (let j = 0; j < perFile * 5; j++)
    lines.push(`Record ${k}-${j} notes reading ${(j * 7919) % 10007} at station${j % 97} for sensor${k}.`);
  return lines.join('\n');
}

type Body = Record<string, unknown>;

async function waitDone(http: JsonClient, p: string): Promise<Body> {
  for (;;) {
    const body = (await http.get(p)).body as Body;
    if (body.status === 'completed' || body.status === 'failed') return body;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'spur-bench-rag-'));
  const fake = await startFakeEmbeddingsServer();
  let stack: Stack | undefined;
  try {
    // The bench's index gets the HNSW index (as any index from SPUR_VECTOR_ANN_MIN_ROWS, 10 000, on).
    stack = await startStack({ tmpDir: tmp, extraEnv: { SPUR_VECTOR_ANN_MIN_ROWS: String(settings.annMinRows) } });
    const http = jsonClient(stack.apiUrl, 4);
    for (const [name, value] of Object.entries({ OPENAI_API_KEY: 'sk-bench', OPENAI_API_BASE: `${fake.url}/v1` }))
      await http.post('/env-mgmt/', { name, value });
    const load = os.loadavg()[0]?.toFixed(1);

    const form = new FormData();
    form.append('metadata', JSON.stringify({ name: 'bench', text_processing: TEXT_PROCESSING }));
    for (let k = 0; k < FILES; k++)
      form.append('files', new Blob([fileText(k)], { type: 'text/plain' }), `file-${k}.txt`);
    const t0 = performance.now();
    // Multipart goes through fetch; the JSON calls through the bench's keep-alive client.
    const res = await fetch(`${stack.apiUrl}/rag/collections/`, { method: 'POST', body: form });
    const created = { status: res.status, body: (await res.json()) as Body };
    if (created.status !== 200) throw new Error(`create collection: ${created.status} ${JSON.stringify(created.body)}`);
    const ingest = await waitDone(http, `/rag/collections/${String(created.body.id)}/progress/`);
    const ingestSeconds = (performance.now() - t0) / 1000;
    const chunks = Number(ingest.processed_chunks);
    console.log(`ingest: ${chunks} chunks in ${ingestSeconds.toFixed(1)} s (${ingest.status})`);

    const t1 = performance.now();
    const index = (await http.post('/rag/indices/', {
      name: 'bench',
      collection_id: created.body.id,
      embedding: {
        model: 'openai/text-embedding-3-small',
        vector_db: 'lancedb',
        search_strategy: 'vector',
        keyword_weight: 0,
        score_threshold: null,
      },
    })) as { status: number; body: Body };
    if (index.status !== 200) throw new Error(`create index: ${index.status} ${JSON.stringify(index.body)}`);
    const built = await waitDone(http, `/rag/indices/${String(index.body.id)}/progress/`);
    const indexSeconds = (performance.now() - t1) / 1000;
    console.log(`index: ${String(built.processed_chunks)} chunks in ${indexSeconds.toFixed(1)} s (${built.status})`);

    const query = (q: number) => `reading at station${q % 97} for sensor${q % FILES}`;
    const timed = async (body: (q: number) => Record<string, unknown>) => {
      const latencies: number[] = [];
      for (let q = 0; q < settings.queries; q++) {
        const s = performance.now();
        const reply = await http.post(`/rag/indices/${String(index.body.id)}/retrieve/`, body(q));
        if (reply.status !== 200) throw new Error(`retrieve: ${reply.status}`);
        latencies.push(performance.now() - s);
      }
      return latencies;
    };
    const latencies = await timed((q) => ({ query: query(q), top_k: 5 }));
    const hybrid = await timed((q) => ({ query: query(q), top_k: 5, keyword_weight: 0.5, semantic_weight: 0.5 }));
    // The store alone, in this process, on the same files: what LanceDB's flat search costs.
    const store = createLanceStore(path.join(tmp, 'data', 'vectors'));
    const storeTimes = async (exact: boolean) => {
      const times: number[] = [];
      for (let q = 0; q < settings.queries; q++) {
        const vector = bagOfWordsVector(query(q), 1536);
        const s = performance.now();
        await store.search(String(index.body.id), vector, 5, { exact });
        times.push(performance.now() - s);
      }
      return times;
    };
    const storeAnn = await storeTimes(false);
    const storeExact = await storeTimes(true);
    const rss = { api: peakRssMiB(stack.groups.api), worker: peakRssMiB(stack.groups.worker ?? stack.groups.api) };
    const lines = [
      '# Knowledge-base benchmark (`npx tsx bench/rag.ts`)',
      '',
      `Machine: ${os.cpus().length} cores, load average ${load} at start (shared with other agents' test runs: numbers are pessimistic and noisy).`,
      `Stack: api and worker processes, Temporal dev server, FerretDB (SQLite), LanceDB in a local folder; embeddings from a local fake (1536 dimensions).`,
      '',
      '| measure | value |',
      '|---|---|',
      `| ingest (parse + chunk + store) | ${chunks} chunks in ${ingestSeconds.toFixed(1)} s = **${(chunks / ingestSeconds).toFixed(0)} chunks/s** |`,
      `| index (embed + upsert + full-text and HNSW index, SPUR_VECTOR_ANN_MIN_ROWS=${settings.annMinRows}) | ${String(built.processed_chunks)} chunks in ${indexSeconds.toFixed(1)} s = **${(Number(built.processed_chunks) / indexSeconds).toFixed(0)} chunks/s** |`,
      `| retrieve at ${chunks} chunks (HTTP, embed query + search top 5) | p50 **${percentileOf(latencies, 50).toFixed(1)} ms**, p95 ${percentileOf(latencies, 95).toFixed(1)} ms over ${settings.queries} queries |`,
      `| hybrid retrieve (plus BM25 full-text search) | p50 **${percentileOf(hybrid, 50).toFixed(1)} ms**, p95 ${percentileOf(hybrid, 95).toFixed(1)} ms |`,
      `| LanceDB search alone, HNSW index (in process) | p50 **${percentileOf(storeAnn, 50).toFixed(1)} ms**, p95 ${percentileOf(storeAnn, 95).toFixed(1)} ms |`,
      `| LanceDB search alone, exact flat scan of ${chunks} × 1536 (what indices below SPUR_VECTOR_ANN_MIN_ROWS do) | p50 **${percentileOf(storeExact, 50).toFixed(1)} ms**, p95 ${percentileOf(storeExact, 95).toFixed(1)} ms |`,
      `| peak RSS | api ${rss.api.toFixed(0)} MiB, worker ${rss.worker.toFixed(0)} MiB |`,
      `| embedding requests | ${fake.requests.length} |`,
    ];
    console.log(lines.join('\n'));
    mkdirSync(path.join(REPO_ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(path.join(REPO_ROOT, 'bench', 'results', 'rag-latest.md'), `${lines.join('\n')}\n`);
    http.close();
  } finally {
    await stack?.stop();
    await fake.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
