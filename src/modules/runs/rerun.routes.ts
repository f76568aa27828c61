import { defineRoute, type MountableRoute } from '../../http/route';
import type { Reruns } from '../../runs/reruns';
import { RerunRequest } from '../../runs/rerun.schemas';
import { RunIdParams, RunTypeQuery } from './runs.schemas';
import { RunResponse } from '../../runs/response.schemas';

/** Beyond PySpur: repeat an ended run from one node, reusing the outcomes above it. */
export function rerunRoutes(reruns: Reruns): MountableRoute[] {
  return [
    defineRoute({
      carriesValues: true,
      method: 'post',
      path: '/run/{run_id}/rerun/',
      permission: 'run',
      tags: ['runs'],
      summary:
        "Rerun an ended run from a node: a new run (answered like start_run, PENDING) that executes from_node_id and its descendants and reuses every other node's recorded outcome (its task shows reused: true); the run shows rerun_of and rerun_from_node_id. 409: the run is still open; 422: a node that is unknown, not top-level, or whose reused nodes have no outcome",
      params: RunIdParams,
      query: RunTypeQuery,
      body: RerunRequest,
      response: RunResponse,
      errors: [400, 404, 409],
      handler: ({ params, query, body }) => reruns.recordAndLaunch(params.run_id, body, query.run_type),
    }),
  ];
}
