import { z } from 'zod';
import { WHOLE_LIST_PAGE_MAX, WholeListQuery } from '../../http/pagination';
import { defineRoute, type MountableRoute } from '../../http/route';
import { RunResponse } from '../../runs/response.schemas';
import { datasetUpload } from './dataset-upload';
import {
  DatasetDeleted,
  DatasetIdParams,
  DatasetResponse,
  DatasetUploadForm,
  DatasetUploadQuery,
} from './datasets.schemas';
import type { DatasetService } from './datasets.service';

const tags = ['datasets'];

export function datasetRoutes(datasets: DatasetService): MountableRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/ds/',
      permission: 'build',
      summary: 'Upload a dataset (.csv, .jsonl, .json array of objects, .parquet)',
      tags,
      query: DatasetUploadQuery,
      bodyType: 'multipart/form-data',
      middleware: [datasetUpload(datasets)],
      body: DatasetUploadForm,
      response: DatasetResponse,
      errors: [409, 413],
      handler: ({ body }) => datasets.get(body.file),
    }),
    defineRoute({
      method: 'get',
      path: '/ds/',
      summary: `Datasets in storage order, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      query: WholeListQuery,
      response: z.array(DatasetResponse),
      handler: ({ query }) => datasets.list(query),
    }),
    defineRoute({
      method: 'get',
      path: '/ds/{dataset_id}/',
      summary: 'Get a dataset',
      tags,
      params: DatasetIdParams,
      response: DatasetResponse,
      errors: [404],
      handler: ({ params }) => datasets.get(params.dataset_id),
    }),
    defineRoute({
      method: 'delete',
      path: '/ds/{dataset_id}/',
      permission: 'build',
      summary: 'Delete a dataset with its rows and file',
      tags,
      params: DatasetIdParams,
      response: DatasetDeleted,
      errors: [404],
      handler: async ({ params }) => {
        await datasets.remove(params.dataset_id);
        return { message: 'Dataset deleted' };
      },
    }),
    defineRoute({
      carriesValues: true,
      method: 'get',
      path: '/ds/{dataset_id}/list_runs/',
      summary: `Runs that used this dataset (its batches: the parent runs; rows are runs R<parent>-<row>), newest first, ${WHOLE_LIST_PAGE_MAX} per page unless page_size says fewer`,
      tags,
      params: DatasetIdParams,
      query: WholeListQuery,
      response: z.array(RunResponse),
      errors: [404],
      handler: ({ params, query }) => datasets.listRuns(params.dataset_id, query),
    }),
  ];
}
