import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** A label's fixed set of values: the series a counter can ever have are known before it counts. */
type Vocabulary = Record<string, readonly string[]>;
type LabelsOf<V extends Vocabulary> = { [K in keyof V]: V[K][number] };

/** One sample of a gauge read at scrape time. */
export interface Sample<L extends string> {
  labels: Partial<Record<L, string>>;
  value: number;
}

/** Reads what a gauge shows now from the thing that holds it (a pool, the open streams, the database). */
export type Reader<O, L extends string> = (owner: O) => Sample<L>[] | Promise<Sample<L>[]>;

export function metricKinds(registry: Registry) {
  const registers = [registry];
  return {
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      new Counter<L>({ name, help, labelNames, registers }),

    histogram: <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers }),

    /**
     * A counter whose labels take only the values listed: the compiler refuses any other, and
     * every series is there at 0 from the start, so a rate over it needs no first event.
     */
    fixedCounter<V extends Vocabulary>(name: string, help: string, vocabulary: V) {
      const counter = new Counter<Extract<keyof V, string>>({
        name,
        help,
        labelNames: Object.keys(vocabulary) as Extract<keyof V, string>[],
        registers,
      });
      for (const labels of everyCombination(vocabulary)) counter.inc(labels, 0);
      return { inc: (labels: LabelsOf<V>, by = 1) => counter.inc(labels, by) };
    },

    /**
     * A gauge read when scraped from the things that hold its value now, summed over them: one
     * process may hold several (an api per test in one process). Held weakly, so an owner that is
     * gone stops counting. A read that fails leaves the last value shown rather than a false 0.
     * Exported once a first owner is tracked: a process that holds none (a worker has no event
     * streams) shows no series rather than a 0 that would read as a fact.
     */
    sampledGauge<L extends string>(name: string, help: string, labelNames: readonly L[]) {
      const owners = new Set<{ owner: WeakRef<object>; read: Reader<object, L> }>();
      const gauge = new Gauge<L>({
        name,
        help,
        labelNames,
        registers: [],
        async collect() {
          const samples: Sample<L>[] = [];
          try {
            for (const entry of owners) {
              const owner = entry.owner.deref();
              if (owner === undefined) owners.delete(entry);
              else samples.push(...(await entry.read(owner)));
            }
          } catch {
            return;
          }
          this.reset();
          for (const { labels, value } of samples) this.inc(labels, value);
        },
      });
      return {
        track<O extends object>(owner: O, read: Reader<O, L>): void {
          if (!registry.getSingleMetric(name)) registry.registerMetric(gauge);
          owners.add({ owner: new WeakRef(owner), read: read as Reader<object, L> });
        },
      };
    },
  };
}

function everyCombination<V extends Vocabulary>(vocabulary: V): LabelsOf<V>[] {
  return Object.entries(vocabulary).reduce<Record<string, string>[]>(
    (combos, [label, values]) => combos.flatMap((combo) => values.map((value) => ({ ...combo, [label]: value }))),
    [{}],
  ) as LabelsOf<V>[];
}
