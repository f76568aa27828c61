import { CancelledFailure } from '@temporalio/activity';
import { metrics } from '../../src/metrics/metrics';
import { getNodeType } from '../../src/nodes/registry';

/**
 * Times one execution of a node (every attempt, each its own activity, or a row of a pure region
 * or an inline batch) into spur_node_duration_seconds, by its type as the registry names it and how
 * the attempt ended, as a task's status says it.
 */
export async function timedNode<T>(nodeType: string, body: () => Promise<T>): Promise<T> {
  const timer = metrics.nodeDuration.startTimer({ node_type: getNodeType(nodeType)?.name ?? 'unknown' });
  try {
    const result = await body();
    timer({ status: 'COMPLETED' });
    return result;
  } catch (err) {
    timer({ status: err instanceof CancelledFailure ? 'CANCELED' : 'FAILED' });
    throw err;
  }
}
