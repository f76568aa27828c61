// The spawner helper's process (see spawner.ts): spawns harnesses on its parent's request and
// reports what they write and how they end. It holds no state but its running harnesses, and ends
// with its parent: when the IPC channel closes (the worker exited or was killed), every harness's
// group is killed first.
import { type HarnessProcess, spawnHarness } from './harness-process';
import type { SpawnerReport, SpawnerRequest } from './spawner-protocol';

const running = new Map<number, HarnessProcess>();

function report(message: SpawnerReport): void {
  // A report the channel cannot take any more: the parent is gone, and `disconnect` ends this process.
  if (process.connected) process.send?.(message);
}

function start(id: number, request: Extract<SpawnerRequest, { kind: 'spawn' }>): void {
  let harness: HarnessProcess;
  try {
    harness = spawnHarness(request.spawn).harness;
  } catch (error) {
    report({ kind: 'error', id, message: (error as Error).message });
    return;
  }
  running.set(id, harness);
  // Relayed up to one byte past the cap, so the parent sees it passed; then the group is killed.
  let relayed = 0;
  harness.onOutput((stream, chunk) => {
    if (relayed > request.outputLimitBytes) return;
    const room = request.outputLimitBytes + 1 - relayed;
    relayed += chunk.length;
    report({ kind: 'output', id, stream, chunk: chunk.length > room ? chunk.subarray(0, room) : chunk });
    if (relayed > request.outputLimitBytes) harness.killGroup();
  });
  harness.onExit((code, signal) => report({ kind: 'exit', id, code, signal }));
  harness.onError((error) => report({ kind: 'error', id, message: error.message }));
  harness.onClose(() => {
    running.delete(id);
    report({ kind: 'close', id });
  });
}

process.on('message', (message: SpawnerRequest) => {
  if (message.kind === 'spawn') start(message.id, message);
  else running.get(message.id)?.killGroup();
});

// A report sent as the channel closes fails here rather than as an uncaught error: `disconnect` follows.
process.on('error', () => undefined);

process.on('disconnect', () => {
  for (const harness of running.values()) harness.killGroup();
  process.exit(0);
});
