import { fromJsonText } from '../db/json-text';
import type { RunDoc } from '../db/models';
import { planGraph } from '../engine/graph';
import { planRerun, reusedStates } from '../engine/rerun-plan';
import type { RunDefinition, TaskRecord } from '../engine/run-contract';
import type { RunRerun } from '../contracts/run-contract';
import { BadRequestError } from '../errors';
import { checkRunnable, resolveRunInputs } from './inputs';

/**
 * Most JSON a rerun's reused tasks may take in its workflow input: Temporal refuses a payload over
 * 2 MB, and the definition travels beside them. (Outputs over SPUR_VALUE_REF_BYTES are references.)
 */
export const MAX_REUSED_BYTES = 1024 * 1024;

/** A rerun the definition cannot carry out; `field` names the request field to change. */
export class RerunRefused extends BadRequestError {
  constructor(
    message: string,
    readonly field: 'from_node_id' | 'input_overrides' | 'version',
  ) {
    super(message, 'RERUN_REFUSED');
  }
}

/** What a rerun record says about itself (before it exists, when the api checks a request). */
export interface RerunSource {
  fromNodeId: string;
  initialInputs: Record<string, Record<string, unknown>> | null;
  inputOverrides: Record<string, unknown> | null;
}

/** The rerun fields of a stored run, or null for a run that is not a rerun. */
export function rerunSourceOf(run: RunDoc): RerunSource | null {
  if (!run.rerun_of || !run.rerun_from_node_id) return null;
  return {
    fromNodeId: run.rerun_from_node_id,
    initialInputs: fromJsonText<Record<string, Record<string, unknown>>>(run.initial_inputs),
    inputOverrides: fromJsonText<Record<string, unknown>>(run.rerun_input_overrides),
  };
}

/**
 * The launch extras of a rerun: which outcomes of the original run (its ended tasks) are preset,
 * and the input of the start node. Computed from the record and the original's tasks alone, so the
 * api and the reconciler (a rerun whose api died before starting it) launch the same run.
 * Throws RerunRefused (a 400 to the reconciler, a 422 to a client) when the plan cannot hold.
 */
export function rerunExtras(
  definition: RunDefinition,
  source: RerunSource,
  original: readonly TaskRecord[],
): { inputNodeInput: Record<string, unknown>; rerun: RunRerun } {
  const inputNode = checkRunnable(definition);
  const planned = planRerun(definition, planGraph(definition), source.fromNodeId, original);
  if (!planned.ok) throw new RerunRefused(planned.message, 'from_node_id');
  const carried = Buffer.byteLength(JSON.stringify(planned.tasks));
  if (carried > MAX_REUSED_BYTES) {
    throw new RerunRefused(
      `The reused outputs take ${carried} bytes, more than a run's start carries (${MAX_REUSED_BYTES}): rerun from a node further up`,
      'from_node_id',
    );
  }
  const reusedInput = reusedStates(planned.tasks).get(inputNode.id);
  let inputNodeInput: Record<string, unknown>;
  if (reusedInput?.status === 'COMPLETED') inputNodeInput = reusedInput.output ?? {};
  else {
    try {
      inputNodeInput = resolveRunInputs(definition, source.initialInputs);
    } catch (err) {
      if (err instanceof BadRequestError)
        throw new RerunRefused(err.message, source.inputOverrides ? 'input_overrides' : 'version');
      throw err;
    }
  }
  // The InputNode's new input is the run's initial_inputs; any other start node gets it here.
  const override = source.fromNodeId !== inputNode.id ? source.inputOverrides : null;
  return {
    inputNodeInput,
    rerun: { fromNodeId: source.fromNodeId, tasks: planned.tasks, ...(override ? { inputOverride: override } : {}) },
  };
}
