// Model calls held at the fake provider, and what a client sees of their node meanwhile: the
// tests' graphs ask `say {{in.x}}`, so a run's calls are told apart by the word it was given.
import assert from 'node:assert/strict';
import type { Engine } from './engine';
import { until } from './exec-log';
import type { FakeLlmServer, RecordedRequest } from './fake-llm-server';
import { openSse } from './sse';

/** The model calls (not other requests) whose prompt says `say <word>`. */
export function callsSaying(fake: FakeLlmServer, word: string): RecordedRequest[] {
  return fake.requests.filter((r) => r.protocol !== null && JSON.stringify(r.body).includes(`say ${word}`));
}

/** Holds the provider's answer (`output`) to calls saying `say <word>` until the returned function is called. */
export function holdCallsSaying(fake: FakeLlmServer, word: string, output: string): () => void {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  fake.respondWith((req) =>
    JSON.stringify(req.body).includes(`say ${word}`)
      ? { content: JSON.stringify({ output }), heldUntil: held }
      : undefined,
  );
  return () => release();
}

/**
 * Once a call saying `say <word>` reached the provider (which holds it): the run's record shows the
 * run and `nodeId`'s task RUNNING, and its event stream has said the task started and not that it ended.
 */
export async function assertShownRunningWhileHeld(
  engine: Engine,
  fake: FakeLlmServer,
  runId: string,
  word: string,
  nodeId: string,
): Promise<void> {
  const stream = await openSse(`${engine.api.baseUrl}/run/${runId}/events/`);
  try {
    await until('the call is made', () => callsSaying(fake, word).length > 0, 60_000);
    const shown = (await engine.http.get(`/run/${runId}/`)).body as {
      status: string;
      tasks: Array<{ node_id: string; status: string }>;
    };
    assert.equal(shown.status, 'RUNNING');
    assert.equal(shown.tasks.find((t) => t.node_id === nodeId)?.status, 'RUNNING');
    const events = await stream.waitFor(
      (seen) => seen.some((e) => e.event === 'task.started' && e.data?.node_id === nodeId),
      20_000,
    );
    assert.ok(!events.some((e) => e.event === 'task.completed' && e.data?.node_id === nodeId), 'not ended yet');
  } finally {
    stream.close();
  }
}
