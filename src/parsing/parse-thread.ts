import { ParquetFormatError, planRowGroups, readRowGroup } from './datasets/parquet-decode';
import { splitDocument } from './documents/chunker';
import { DocumentParseError } from './documents/parsed-document';
import { parseDocument } from './documents/parsers';
import { serveJobs } from '../threads/serve-jobs';
import { ParseLimitError } from './limits';
import { loadCountingPdfjs } from './pdf-text';
import type { ParseJob, ParseOutcome, ParseValue } from './parse-jobs';

/** A parse thread (see parse-pool.ts): documents and Parquet row groups, one job at a time. */

async function run(job: ParseJob): Promise<ParseValue> {
  switch (job.kind) {
    case 'document': {
      const document = await parseDocument(job.fileName, job.mimeType, job.bytes, job.maxBytes);
      const pieces = splitDocument(document, job.chunking);
      if (job.output === 'ingest') return { text: document.text, pieces };
      const picks = [...new Set([0, Math.floor(pieces.length / 2), pieces.length - 1])].flatMap((i) => pieces[i] ?? []);
      return { picks, total: pieces.length };
    }
    case 'parquet-plan':
      return planRowGroups(job.footer, job.fileLength, job.fileName, job.maxBytes);
    case 'parquet-rows':
      return readRowGroup(job, job.index);
  }
}

async function answer(job: ParseJob): Promise<ParseOutcome> {
  try {
    return { ok: true, value: await run(job) };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof ParseLimitError) return { ok: false, kind: 'limit', message };
    if (err instanceof DocumentParseError || err instanceof ParquetFormatError)
      return { ok: false, kind: 'format', message };
    // Anything else a library threw reading the file: the file's fault as far as the caller can tell.
    return { ok: false, kind: 'format', message: `${job.fileName} could not be read: ${message}` };
  }
}

// PDF.js (a few MB of code, patched) loads while the thread starts, not within the first PDF's time limit.
serveJobs(answer, loadCountingPdfjs);
