import type { WorkflowVersionDoc } from '../../db/models';
import { leafOutputVariables } from '../../evals/output-variable';
import { storedRunDefinition } from '../../runs/inputs';
import { invalidField } from './eval-errors';

/**
 * The output variable to score when a request names none: the one output variable the versions
 * have between them. None, or several to choose from, is a 422 naming `output_variable` and the
 * choices, since guessing would score the wrong answer.
 */
export function soleOutputVariable(versions: WorkflowVersionDoc[]): string {
  const names = new Set(
    versions.flatMap((v) => leafOutputVariables(storedRunDefinition(v.definition)).map((o) => o.prefixed_variable)),
  );
  const [only] = names;
  if (names.size === 1 && only !== undefined) return only;
  const which = versions.map((v) => v.version).join(' and ');
  throw invalidField(
    'output_variable',
    names.size === 0
      ? `Field required: versions ${which} of workflow ${versions[0]?.workflow_id} have no output variable`
      : `Field required: versions ${which} of workflow ${versions[0]?.workflow_id} have several output variables (${[...names].join(', ')}); name the one to score`,
    null,
  );
}
