import assert from 'node:assert/strict';
import { runDocument } from '../../src/db/runs/run-documents';
import type { RunDoc } from '../../src/db/models';
import { RUN_KINDS, type RunFields, type RunKind, type StoredParts, recordFields } from '../../src/runs/run-kinds';
import type { RunCaller } from '../../src/runs/run-caller';

// What each kind of run records, as docs/runs.md, triggers.md, evals.md, mcp.md, llm-and-agents.md
// and the ledger's api_key group describe it. The expectations are written from those docs.

const version = { _id: 'V3', workflow_id: 'S1' };
const inputs = { in: { q: 'x' } };
const recorded = (
  request: RunFields,
  stored: StoredParts = { initialInputs: inputs },
  caller: RunCaller | null = { id: 'key:abc', name: 'ada' },
) => runDocument({ ...recordFields(request, version, stored, caller), id: 'R9', seq: 9 });

/** The fields a kind decides; every run also records its workflow, version and inputs. */
type Shown = Pick<
  RunDoc,
  | 'run_type'
  | 'started_by'
  | 'started_by_name'
  | 'parent_run_id'
  | 'output_file_id'
  | 'input_dataset_id'
  | 'rerun_of'
  | 'trigger'
>;
const shown = (run: RunDoc): Shown => ({
  run_type: run.run_type,
  started_by: run.started_by,
  started_by_name: run.started_by_name,
  parent_run_id: run.parent_run_id,
  output_file_id: run.output_file_id,
  input_dataset_id: run.input_dataset_id,
  rerun_of: run.rerun_of,
  trigger: run.trigger,
});
const plain: Shown = {
  run_type: 'interactive',
  started_by: 'key:abc',
  started_by_name: 'ada',
  parent_run_id: null,
  output_file_id: null,
  input_dataset_id: null,
  rerun_of: null,
  trigger: null,
};

describe('what each kind of run records', () => {
  it("records a client's start_run and blocking run with its ?run_type= and parent, no trigger", () => {
    for (const kind of ['start_run', 'blocking'] as const) {
      const run = recorded({ kind, runType: 'interactive', parentRunId: 'R1' });
      assert.deepEqual(shown(run), { ...plain, parent_run_id: 'R1' }, kind);
      assert.equal(run.status, 'PENDING');
      assert.equal(run.workflow_version_id, 'V3');
      assert.deepEqual(JSON.parse(run.initial_inputs ?? 'null'), inputs);
    }
  });

  it('records mcp, openai and webhook runs with their own run_type, whatever the client asks', () => {
    for (const kind of ['mcp', 'openai'] as const)
      assert.deepEqual(shown(recorded({ kind, runType: 'mine' })), { ...plain, run_type: kind }, kind);
    const webhook = recorded({ kind: 'webhook', trigger: { kind: 'webhook', id: 'TR2', deliveryId: 'd-1' } });
    assert.equal(webhook.run_type, 'webhook');
    assert.deepEqual(webhook.trigger, {
      kind: 'webhook',
      id: 'TR2',
      scheduled_time: null,
      delivery_id: 'd-1',
      key: null,
    });
    // A delivery comes with no caller: its trigger started it (SpurStartedBy).
    const delivered = recorded(
      { kind: 'webhook', trigger: { kind: 'webhook', id: 'TR2', deliveryId: 'd-2' } },
      undefined,
      null,
    );
    assert.deepEqual([delivered.started_by, delivered.started_by_name], [null, 'webhook:TR2']);
  });

  it("records a schedule's fire as scheduled, with its trigger and no caller (the ledger groups it as schedule)", () => {
    const at = new Date('2025-01-02T03:04:05Z');
    const run = recorded({ kind: 'scheduled', trigger: { kind: 'schedule', id: 'SC4', scheduledTime: at, key: 'k' } });
    assert.deepEqual(shown(run), {
      ...plain,
      run_type: 'scheduled',
      started_by: null,
      started_by_name: 'schedule:SC4',
      trigger: { kind: 'schedule', id: 'SC4', scheduled_time: at, delivery_id: null, key: 'k' },
    });
  });

  it('records a rerun with the rerun_of and from node, standing alone (no parent), with its run_type', () => {
    const run = recorded(
      {
        kind: 'rerun',
        runType: 'interactive',
        rerun: { of: 'R5', fromNodeId: 'b', overrides: null, inputNodeId: null },
      },
      { initialInputs: inputs },
    );
    assert.deepEqual(shown(run), { ...plain, rerun_of: 'R5' });
    assert.equal(run.rerun_from_node_id, 'b');
  });

  it("records a bulk action's retry as its maker's run of the original's run_type, standing alone", () => {
    const run = recorded({ kind: 'retry', runType: 'webhook' });
    assert.deepEqual(shown(run), { ...plain, run_type: 'webhook' });
    assert.deepEqual(JSON.parse(run.initial_inputs ?? 'null'), inputs);
  });

  it('records a batch and an eval over their dataset, with rows, mini-batch size and output file', () => {
    for (const [kind, runType] of [
      ['batch', 'batch'],
      ['eval', 'eval'],
    ] as const) {
      const run = recorded(
        { kind, dataset: { id: 'DS1', rows: 7, miniBatchSize: 3 } },
        { initialInputs: {}, outputFileId: 'OF2' },
      );
      assert.deepEqual(shown(run), { ...plain, run_type: runType, output_file_id: 'OF2', input_dataset_id: 'DS1' });
      assert.deepEqual([run.rows_total, run.rows_done, run.rows_failed, run.mini_batch_size], [7, 0, 0, 3]);
    }
  });

  it('makes an output file for the batch kinds only, and merges files only for the blocking run', () => {
    const kinds = Object.keys(RUN_KINDS) as RunKind[];
    assert.deepEqual(
      kinds.filter((k) => RUN_KINDS[k].outputFile),
      ['batch', 'eval'],
    );
    assert.deepEqual(
      kinds.filter((k) => RUN_KINDS[k].mergesFiles),
      ['blocking'],
    );
  });
});
