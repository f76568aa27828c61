import { workspaceAttribute, workspaceShare } from '../../db/workspace-scope';
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import type { Values } from '../../db/values';
import type { WorkflowPauses } from '../../db/workflow-pauses';
import { BadRequestError, SpurError } from '../../errors';
import type { DefinitionLimits } from '../../config/settings';
import type { PartialRunInput as PartialRunWorkflowInput } from '../../contracts/run-contract';
import { WorkflowType } from '../../contracts/workflow-names';
import { checkRunnable, checkWithinLimits, storedRunDefinition } from '../../runs/inputs';
import type { OutcomeWait } from '../../runs/outcome-wait';
import { storeClientValues } from '../../runs/values';
import type { WorkflowService } from '../workflows/workflows.service';
import type { PartialRunInput } from './runs.schemas';

export interface PartialRunDeps {
  temporal: Client;
  workflows: Pick<WorkflowService, 'load'>;
  /** Its large values, stored under the partial run's own scope. */
  values: Values;
  wait: Pick<OutcomeWait, 'within'>;
  taskQueue: string;
  workflowIdPrefix: string;
  /** Priority and fairness keys on its starts (SPUR_FAIR_SHARE, src/contracts/work-share.ts). */
  fairShare: boolean;
  /** Request eager workflow start: only with a client over a NativeConnection shared with a worker. */
  eagerStart: boolean;
  definitionLimits: DefinitionLimits;
  /** It records no run, so it asks the pauses itself what the recorder asks for every other start. */
  pauses: Pick<WorkflowPauses, 'refuseStarts'>;
}

/**
 * PySpur's run_partial: one node (and what it needs) computed in a workflow of its own, answered
 * within the blocking wait. It has no run record: its large values live under a scope of their own,
 * which the caller drops (`dropPartial`) once the response has been sent.
 */
export function createPartialRuns(deps: PartialRunDeps) {
  async function runPartial(
    workflowId: string,
    body: PartialRunInput,
    valueScope: string,
  ): Promise<Record<string, Record<string, unknown>>> {
    const workflow = await deps.workflows.load(workflowId);
    await deps.pauses.refuseStarts(workflow._id);
    const definition = storedRunDefinition(workflow.definition);
    const inputNode = checkRunnable(definition);
    checkWithinLimits(definition, deps.definitionLimits);
    const given = await storeClientValues(deps.values, valueScope, body.initial_inputs ?? {}, 'initial_inputs');
    const precomputed = await storeClientValues(
      deps.values,
      valueScope,
      Object.fromEntries(
        Object.entries(body.partial_outputs ?? {}).filter(
          (e): e is [string, Record<string, unknown>] => !Array.isArray(e[1]),
        ),
      ),
      'partial_outputs',
    );
    const input: PartialRunWorkflowInput = {
      definition,
      inputNodeInput: given[inputNode.id] ?? given[inputNode.title] ?? {},
      targetNodeId: body.node_id,
      precomputed,
      valueScope,
    };
    const handle = await deps.temporal.workflow.start(WorkflowType.spurPartialRun, {
      workflowId: `${deps.workflowIdPrefix}partial-${workflow._id}-${randomUUID()}`,
      args: [input],
      staticSummary: `${workflow.name} (${workflow._id}) partial run of ${body.node_id}`,
      requestEagerStart: deps.eagerStart,
      typedSearchAttributes: workspaceAttribute(),
      ...workspaceShare('interactive', deps),
    });
    try {
      const result = await deps.wait.within(handle.result() as Promise<Record<string, Record<string, unknown>>>);
      if (result === 'timeout')
        throw new SpurError(
          'timed_out',
          'PARTIAL_RUN_TIMEOUT',
          'The partial run did not finish within the blocking wait limit',
        );
      if (result === 'stopping')
        throw new SpurError('unavailable', 'API_STOPPING', 'The api is shutting down; send the partial run again');
      return result;
    } catch (err) {
      if (err instanceof WorkflowFailedError) throw new BadRequestError(err.cause?.message ?? err.message);
      throw err;
    }
  }

  return {
    runPartial,
    newPartialScope: () => `partial-${randomUUID()}`,
    dropPartial: (valueScope: string) => deps.values.deleteScopes([valueScope]),
  };
}

export type PartialRuns = ReturnType<typeof createPartialRuns>;
