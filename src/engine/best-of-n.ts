import { type GraphNode, type NodeOutput, type TokenUsage, addUsage } from './run-contract';
import type { CompositeResult, StepRunner } from './composite';
import { failureUsage } from './failure-usage';

/** PySpur's default `rating_prompt` (the node's config default too). */
export const DEFAULT_RATING_PROMPT =
  'Rate the following response on a scale from 0 to 10, where 0 is poor and 10 is excellent. ' +
  'Consider factors such as relevance, coherence, and helpfulness. Respond with only a number.';

const RATING_SCHEMA = '{"type": "object", "properties": {"rating": {"type": "number"} }, "required": ["rating"]}';
/** A generation: the BestOfNNode's own activity makes one completion with the node's config (and its defaults). */
function sampleNode(node: GraphNode, i: number): GraphNode {
  return { ...node, id: `${node.id}.sample_${i}`, title: `${node.title} sample ${i}`, parent_id: node.id };
}

/** PySpur's rater: the rating prompt as system message, the sample as the (JSON) user message. */
function ratingNode(node: GraphNode, i: number): GraphNode {
  const { llm_info, timeout_seconds, max_retries, heartbeat_timeout_seconds } = node.config;
  const config = {
    llm_info,
    timeout_seconds,
    max_retries,
    heartbeat_timeout_seconds,
    system_message: typeof node.config.rating_prompt === 'string' ? node.config.rating_prompt : DEFAULT_RATING_PROMPT,
    user_message: '',
    output_json_schema: RATING_SCHEMA,
  };
  return {
    id: `${node.id}.rating_${i}`,
    title: `${node.title} rating ${i}`,
    parent_id: node.id,
    node_type: 'SingleLLMCallNode',
    config: JSON.parse(JSON.stringify(config)) as Record<string, unknown>,
  };
}

/**
 * BestOfNNode, as PySpur runs it: `samples` completions, each rated by one more call with
 * `rating_prompt`; the output is the highest-rated sample (the first of equals). Every sample and
 * rating is its own step, each sample followed by its rating, all samples in parallel.
 */
export async function runBestOfN(
  steps: StepRunner,
  node: GraphNode,
  input: Record<string, unknown>,
): Promise<CompositeResult> {
  const samples = Math.min(10, Math.max(1, Math.trunc(Number(node.config.samples ?? 3)) || 3));
  let usage: TokenUsage | undefined;
  // A step that fails still paid for the calls it had answered: its failure carries them.
  const counted = async <T extends { usage?: TokenUsage | undefined }>(step: Promise<T>): Promise<T> => {
    try {
      const done = await step;
      usage = addUsage(usage, done.usage);
      return done;
    } catch (err) {
      usage = addUsage(usage, failureUsage(err));
      throw err;
    }
  };
  const one = async (i: number): Promise<{ output: NodeOutput; rating: number }> => {
    const sample = await counted(steps.execute(sampleNode(node, i), input));
    const rated = await counted(steps.execute(ratingNode(node, i), { response: sample.output }));
    const rating = Number(rated.output.rating);
    return { output: sample.output, rating: Number.isFinite(rating) ? rating : Number.NEGATIVE_INFINITY };
  };
  try {
    const results = await Promise.all(Array.from({ length: samples }, (_, i) => one(i + 1)));
    const best = results.reduce((a, b) => (b.rating > a.rating ? b : a));
    const history = { samples: results.map((r) => r.output), ratings: results.map((r) => r.rating) };
    return { state: { status: 'COMPLETED', output: best.output }, history, usage };
  } catch (err) {
    if (steps.isCancellation(err)) throw err;
    // Samples still out when one failed are not waited for: the budget's ledger counts their calls.
    return { state: { status: 'FAILED', error: steps.failureMessage(err) }, history: {}, usage };
  }
}
