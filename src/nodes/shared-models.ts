import { z } from 'zod';

/** Static input/output model that accepts any fields (PySpur's `extra = "allow"` models). */
export function openObject() {
  return z.looseObject({});
}

/**
 * A nested workflow definition as a loop or agent config carries it. Only the outline is
 * checked here; the workflow module validates the graph itself.
 */
export const subworkflowSchema = z.looseObject({
  nodes: z.array(z.looseObject({})),
  links: z.array(z.looseObject({})),
});
