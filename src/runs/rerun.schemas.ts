import { z } from '../zod';
import { withoutReservedKey } from './values';

/** `POST /run/{run_id}/rerun/` (beyond PySpur). */
export const RerunRequest = z
  .object({
    from_node_id: z.string().min(1).max(200).openapi({
      description:
        'A top-level node of the workflow (not one inside a loop or composite): it and every node downstream of it run again; every other node keeps the outcome the original run recorded',
    }),
    input_overrides: withoutReservedKey(z.record(z.string(), z.unknown()).nullable().default(null)).openapi({
      description:
        "The start node's input, replacing what its predecessors hand it (keyed, as node inputs are, by predecessor title). For the InputNode: its fields, which become the rerun's initial_inputs. Omitted: the node gets its usual input (for the InputNode, the original run's initial_inputs)",
    }),
    version: z.enum(['same', 'current']).default('same').openapi({
      description:
        "'same': the workflow version the original run ran; 'current': the workflow's definition now (pinned as a version like any run's)",
    }),
  })
  .openapi('RerunRequest');
export type RerunInput = z.output<typeof RerunRequest>;
