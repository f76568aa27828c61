import assert from 'node:assert/strict';
import { LLM_BASE_URL_VARIABLES } from '../../../src/nodes/ai/llm/provider-settings';
import { createOutputFileWriter } from '../../../src/modules/output-files/output-file-writer';
import type { TestApi } from '../api';
import { linearDefinition } from '../fixtures';
import { client } from '../http';

/** Ids of objects that exist, by the path parameter name that addresses them. */
export type Pools = Record<string, string[]>;

export interface TestFileRef {
  workflowId: string;
  fileName: string;
}

const FINAL_STATUSES = ['COMPLETED', 'FAILED', 'CANCELED'] as const;

/**
 * Real objects for the fuzzer to aim at, so handlers get past their "not found" checks. A fuzzed
 * DELETE may remove one: `replenish` re-creates whatever is gone (under a new id, as a client
 * would). Runs are inserted as finished projections: starting real ones would need a worker, and
 * a finished run answers every run route without waiting on Temporal.
 */
export function createRealObjects(api: TestApi) {
  const http = client(api.baseUrl);
  const writer = createOutputFileWriter(api.models);
  const pools: Pools = { workflow_id: [], run_id: [], dataset_id: [], output_file_id: [], name: [] };
  const testFiles: TestFileRef[] = [];
  let made = 0;

  async function workflow(): Promise<string> {
    const res = await http.post('/wf/', {
      name: `fuzz target ${++made}`,
      description: 'd',
      definition: linearDefinition(),
    });
    assert.equal(res.status, 200, res.text);
    await testFile(res.body.id);
    return res.body.id;
  }

  async function testFile(workflowId: string): Promise<void> {
    const form = new FormData();
    form.append('workflow_id', workflowId);
    form.append('node_id', 'input_node');
    form.append('files', new Blob(['a,b\n1,2\n']), `sample${++made}.csv`);
    const res = await http.post('/wf/upload_test_files/', form);
    assert.equal(res.status, 200, res.text);
    const path: string = res.body.input_node[0];
    testFiles.push({ workflowId, fileName: path.split('/')[2]! });
  }

  async function dataset(): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob(['question,answer\nhi,there\n']), 'rows.csv');
    const res = await http.post(`/ds/?name=fuzz-ds-${++made}`, form);
    assert.equal(res.status, 200, res.text);
    return res.body.id;
  }

  async function outputFile(): Promise<string> {
    const { id } = await writer.createOutputFile(null, `out_${++made}.jsonl`);
    await writer.appendLines(id, ['{"a":1}']);
    return id;
  }

  async function run(): Promise<string> {
    const n = ++made;
    const id = `R${900_000 + n}`;
    await api.models.Run.create({
      _id: id,
      seq: 900_000 + n,
      workflow_id: pools.workflow_id[0],
      status: FINAL_STATUSES[n % 3],
      start_time: new Date(),
      end_time: new Date(),
      run_type: 'interactive',
      initial_inputs: '{"input_node":{"question":"q"}}',
      outputs: '{"output_node":{"answer":"a"}}',
      input_dataset_id: pools.dataset_id[0] ?? null,
      output_file_id: pools.output_file_id[0] ?? null,
    });
    return id;
  }

  async function envVar(name: string): Promise<string> {
    assert.equal((await http.post('/env-mgmt/', { name, value: 'sk-fuzz-value-0000' })).status, 200);
    return name;
  }

  const exists = async (path: string) => (await http.get(path)).status === 200;

  return {
    pools,
    testFiles,
    async seed(): Promise<void> {
      for (let i = 0; i < 3; i++) pools.workflow_id.push(await workflow());
      for (let i = 0; i < 2; i++) pools.dataset_id.push(await dataset());
      for (let i = 0; i < 2; i++) pools.output_file_id.push(await outputFile());
      for (let i = 0; i < 3; i++) pools.run_id.push(await run());
      // Every LLM base URL points at a closed loopback port, and the fuzz never sets a provider key:
      // the editor's AI routes then answer 400 (no key) and no request can leave loopback.
      for (const name of LLM_BASE_URL_VARIABLES)
        assert.equal((await http.post('/env-mgmt/', { name, value: 'http://127.0.0.1:9' })).status, 200);
      const names = ((await http.get('/env-mgmt/')).body as string[]).filter(
        (n) => !/_API_KEY$|_TOKEN$/.test(n) && !(LLM_BASE_URL_VARIABLES as readonly string[]).includes(n),
      );
      for (const name of names.slice(0, 2)) await envVar(name);
      pools.name.push(...names.slice(0, 4));
    },
    /** After a DELETE that succeeded: put back whatever is missing. */
    async replenish(): Promise<void> {
      for (const [i, id] of pools.workflow_id.entries())
        if (!(await exists(`/wf/${id}/`))) pools.workflow_id[i] = await workflow();
      // A deleted workflow takes its test files along.
      const alive: TestFileRef[] = [];
      for (const f of testFiles)
        if (await exists(`/files/test_files/${f.workflowId}/${encodeURIComponent(f.fileName)}`)) alive.push(f);
      testFiles.splice(0, testFiles.length, ...alive);
      for (const [i, id] of pools.dataset_id.entries())
        if (!(await exists(`/ds/${id}/`))) pools.dataset_id[i] = await dataset();
      for (const [i, id] of pools.output_file_id.entries())
        if (!(await exists(`/of/${id}/`))) pools.output_file_id[i] = await outputFile();
      for (const name of pools.name.slice(0, 2)) if (!(await exists(`/env-mgmt/${name}`))) await envVar(name);
    },
  };
}

export type RealObjects = ReturnType<typeof createRealObjects>;
