import type { HarnessSpawn, HarnessStream } from './harness-process';

/** What the worker asks of its spawner helper (spawner.ts), over the helper's IPC channel. */
export type SpawnerRequest =
  { kind: 'spawn'; id: number; spawn: HarnessSpawn; outputLimitBytes: number } | { kind: 'kill'; id: number };

/** What the helper tells the worker of each harness it spawned. */
export type SpawnerReport =
  | { kind: 'output'; id: number; stream: HarnessStream; chunk: Buffer }
  | { kind: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'close'; id: number }
  | { kind: 'error'; id: number; message: string };
