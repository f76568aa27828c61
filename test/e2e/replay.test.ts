// Determinism gate: every history in test/fixtures/histories/ must replay against the current
// workflow code, and a workflow with another command sequence must fail to. A failure means a
// change alters the command sequence of the captured runs. Spur keeps no compatibility branches
// before 1.0: a deliberate change is recaptured (`npx tsx scripts/capture-history.ts`), not
// guarded with `patched()` or an input flag. No server is needed to replay.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { History } from '@temporalio/common/lib/proto-utils';
import {
  ReplayError,
  Worker,
  bundleWorkflowCode,
  type ReplayResult,
  type ReplayWorkerOptions,
} from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { quietRuntime } from '../support/quiet-runtime';
import { readHistoryFile } from '../support/history-json';
import { WorkflowType } from '../../src/contracts/workflow-names';
import { workflowBundleCode } from '../../temporal/workflow-bundle';

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const HISTORY_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'histories');
const CHANGED_WORKFLOW = path.join(REPO_ROOT, 'test', 'fixtures', 'replay-workflows', 'changed-spur-run.ts');
const quietLogger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

interface RecordedHistory {
  workflowId: string;
  history: History;
}

/** Every recorded history, its file name (without `.json`) as the workflow id. */
function loadHistories(): RecordedHistory[] {
  return readdirSync(HISTORY_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({
      workflowId: path.basename(f, '.json'),
      history: readHistoryFile(path.join(HISTORY_DIR, f)),
    }));
}

async function replayAll(options: ReplayWorkerOptions, histories: RecordedHistory[]): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories(options, histories)) results.push(result);
  return results;
}

/** The harness's prebuilt bundle of temporal/workflows when there is one, else a fresh bundle. */
async function currentWorkflowCode(): Promise<ReplayWorkerOptions['workflowBundle']> {
  const prebuilt = process.env.SPUR_TEST_WORKFLOW_BUNDLE;
  if (prebuilt) return { codePath: prebuilt };
  return { code: await workflowBundleCode() };
}

describe('e2e: recorded workflow histories replay against the current workflow code', function () {
  this.timeout(120_000);
  const histories = loadHistories();
  before(quietRuntime);

  it('has histories for every workflow type', () => {
    const types = new Set(
      histories.map(({ history }) => history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name),
    );
    assert.deepEqual([...types].sort(), Object.values(WorkflowType).sort());
    assert.ok(histories.length >= 5, `only ${histories.length} histories in ${HISTORY_DIR}`);
  });

  it('replays every history without a determinism violation', async () => {
    const results = await replayAll({ workflowBundle: await currentWorkflowCode() }, histories);
    assert.deepEqual(
      results.map((r) => r.workflowId),
      histories.map((h) => h.workflowId),
    );
    const failures = results
      .filter((r) => r.error !== undefined)
      .map((r) => `${r.workflowId}: ${r.error?.name}: ${r.error?.message}`);
    assert.deepEqual(failures, []);
  });

  it('fails a history replayed against a workflow with a different command sequence', async () => {
    const linear = histories.find((h) => h.workflowId === 'linear');
    assert.ok(linear, 'the linear history is recorded');
    const changed = await bundleWorkflowCode({ workflowsPath: CHANGED_WORKFLOW, logger: quietLogger });
    const [result] = await replayAll({ workflowBundle: changed }, [linear]);
    assert.ok(result?.error, 'replay reported no error');
    assert.ok(
      result.error instanceof DeterminismViolationError || result.error instanceof ReplayError,
      String(result.error),
    );
    assert.equal(result.error.name, 'DeterminismViolationError', result.error.message);
  });
});
