import { performance } from 'node:perf_hooks';
import type { Models } from './models';
import { DEFAULT_WORKSPACE, workspaceScope } from './workspace-scope';

/**
 * How often a process that uses the cache reads the settings counter: a change applies to every
 * call that starts this long after it, in every process (docs/performance.md#settings-in-memory).
 */
export const SETTINGS_CHECK_MS = 1000;
/**
 * A change is in every process's cache this long after its counter moved: a cache read starting
 * then has read the counter since (SETTINGS_CHECK_MS, measured from when that read began), and the
 * margin covers timers that fire a little late. What must not be answered before every process
 * sees it (a workflow's pause) waits this long.
 */
export const SETTINGS_REACH_MS = SETTINGS_CHECK_MS + 100;
/** An entry is read again after this long whatever the counter says (a change whose count was lost). */
const SETTINGS_MAX_AGE_MS = 60_000;
/** Past this many entries (budgets are kept per workflow) everything is forgotten: memory stays bounded. */
const SETTINGS_MAX_ENTRIES = 10_000;

const GENERATION_ID = 'settings';

interface Entry {
  value: Promise<unknown>;
  at: number;
}

/**
 * What every model call reads (provider settings and credentials, limits, budgets, prices), kept
 * in this process's memory. Every change of them, in any process, moves one counter
 * (`settings_generation`); a process reads the counter when it uses the cache and last read it
 * SETTINGS_CHECK_MS ago or more, and forgets everything once it moved. A change therefore applies
 * at once to the next call of the process that made it, and within SETTINGS_CHECK_MS to every
 * call of every other process: at most one small read a second per process, against several
 * reads (and a decryption) per call. API reads of these settings never go through it.
 */
export interface SettingsCache {
  /** `load()`'s answer for `key` in the current workspace, from memory while nothing changed. */
  get<T>(kind: string, key: string, load: () => Promise<T>): Promise<T>;
  /** A setting was written: every process forgets what it kept (this one at once). */
  changed(): Promise<void>;
  /** Resolves once a change made before the call is seen by every process's next read (SETTINGS_REACH_MS). */
  reachedEverywhere(): Promise<void>;
}

const caches = new WeakMap<Models, SettingsCache>();

/** The one cache of a process's models. */
export function settingsCache(models: Models): SettingsCache {
  let cache = caches.get(models);
  if (!cache) {
    cache = createSettingsCache(models);
    caches.set(models, cache);
  }
  return cache;
}

// A monotonic clock: the staleness bound is a duration, which a wall clock set back would stretch.
function createSettingsCache(models: Models, clock: () => number = () => performance.now()): SettingsCache {
  const { SettingsGeneration } = models;
  let entries = new Map<string, Entry>();
  let generation: number | undefined;
  let checkedAt = Number.NEGATIVE_INFINITY;
  /** The counter read under way, and when it began. */
  let checking: { read: Promise<void>; started: number } | undefined;

  const forget = () => {
    entries = new Map();
  };

  /**
   * Reads the counter if it is time to. Concurrent callers share a read begun within
   * SETTINGS_CHECK_MS; one begun earlier (a slow database) may have read the counter before a
   * change its callers must see, so they start another.
   */
  const fresh = (): Promise<void> => {
    const now = clock();
    if (now - checkedAt < SETTINGS_CHECK_MS) return Promise.resolve();
    if (checking && now - checking.started < SETTINGS_CHECK_MS) return checking.read;
    const read = readCounter(now);
    checking = { read, started: now };
    const done = () => {
      if (checking?.read === read) checking = undefined;
    };
    read.then(done, done);
    return read;
  };

  async function readCounter(started: number): Promise<void> {
    const doc = await SettingsGeneration.findById(GENERATION_ID).lean();
    const n = doc?.n ?? 0;
    if (n !== generation) forget();
    generation = n;
    // An older read that ends late never moves the check back.
    checkedAt = Math.max(checkedAt, started);
  }

  return {
    async get<T>(kind: string, key: string, load: () => Promise<T>): Promise<T> {
      await fresh();
      const id = `${kind}\u0000${workspaceScope.current() ?? DEFAULT_WORKSPACE}\u0000${key}`;
      const kept = entries.get(id);
      if (kept && clock() - kept.at < SETTINGS_MAX_AGE_MS) return kept.value as Promise<T>;
      if (entries.size >= SETTINGS_MAX_ENTRIES) forget();
      const into = entries;
      const value = load();
      into.set(id, { value, at: clock() });
      // A failed read is not kept: the next call reads again.
      value.catch(() => {
        if (into.get(id)?.value === value) into.delete(id);
      });
      return value;
    },
    async changed(): Promise<void> {
      forget();
      await SettingsGeneration.updateOne({ _id: GENERATION_ID }, { $inc: { n: 1 } }, { upsert: true });
      // Whatever was read while the write was on its way is forgotten too.
      forget();
    },
    reachedEverywhere: () => new Promise((resolve) => setTimeout(resolve, SETTINGS_REACH_MS)),
  };
}
