import type { DatasetDoc, Models } from './models';
import { StoredRecordMissing } from './errors';
import { type DatasetRow, readChunk } from './dataset-row-chunks';

/** What the batch engine needs to know about a dataset before paging through it. */
export interface DatasetInfo {
  id: string;
  name: string;
  columns: string[];
  row_count: number;
}

/**
 * Read access for the batch engine (api and worker): rows [start, end) cost one `_id` lookup per
 * chunk they touch (plus one for the dataset), whatever the dataset's size.
 */
export function createDatasetReader(models: Models) {
  async function load(id: string): Promise<DatasetDoc> {
    const doc = await models.Dataset.findById(id).lean<DatasetDoc>();
    if (!doc) throw new StoredRecordMissing('dataset', 'Dataset not found');
    return doc;
  }

  return {
    load,
    /** The dataset's columns and size; 404 `Dataset not found` for an unknown id. */
    async getDataset(id: string): Promise<DatasetInfo> {
      const doc = await load(id);
      return { id: doc._id, name: doc.name, columns: [...doc.columns], row_count: doc.row_count };
    },
    /** Rows [start, end) in file order, clamped to the dataset; each row is `{column: value}`. */
    async readRows(datasetId: string, start: number, end: number): Promise<DatasetRow[]> {
      const doc = await load(datasetId);
      const from = Math.max(0, Math.floor(start));
      const to = Math.min(doc.row_count, Math.floor(end));
      if (to <= from) return [];
      const size = doc.chunk_size;
      const first = Math.floor(from / size);
      const last = Math.floor((to - 1) / size);
      const chunks = await Promise.all(
        Array.from({ length: last - first + 1 }, (_, i) => readChunk(models, doc.rows_key, first + i)),
      );
      return chunks.flat().slice(from - first * size, to - first * size);
    },
  };
}

export type DatasetReader = ReturnType<typeof createDatasetReader>;
