import { type Engine } from './engine';
import { type Cfg, l, n } from './graphs';
import { runGraph } from './run-graph';
import { openSse } from './sse';

/** `in` (InputNode, one field per input) → `node` (HTTPRequestNode with `config`): a blocking run. */
export async function runHttpNode(engine: Engine, config: Cfg, inputs: Record<string, unknown> = { x: 'a' }) {
  const definition = {
    nodes: [
      n('in', 'InputNode', { output_schema: Object.fromEntries(Object.keys(inputs).map((k) => [k, 'string'])) }),
      n('node', 'HTTPRequestNode', config),
    ],
    links: [l('in', 'node')],
  };
  const { record, tasks, outputs } = await runGraph(engine, definition, inputs, 'http');
  return { record, task: tasks.node, output: outputs.node };
}

/** Every event of a finished run, as its stream replays them (the stream ends after the final one). */
export async function replayedEvents(engine: Engine, runId: string): Promise<string> {
  const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
  await stream.ended;
  return JSON.stringify(stream.events);
}
