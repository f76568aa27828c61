import { z } from 'zod';
import { fixedOutputConfig } from '../base-config.js';
import { openObject } from '../shared-models.js';
import type { NodeTypeDefinition } from '../types.js';

const output = z.object({ data: z.string() });

const config = fixedOutputConfig(output, {
  spreadsheet_id: z.string().default(''),
  range: z.string().default(''),
});

/** Reads a cell range (e.g. `Sheet1!A1:B10`) of a Google Sheet. */
export const googleSheetsReadNode: NodeTypeDefinition<typeof config> = {
  name: 'GoogleSheetsReadNode',
  displayName: 'GoogleSheetsRead',
  category: 'Integrations',
  visualTag: { acronym: 'GSRN', color: '#6F42C1' },
  config,
  input: openObject(),
  output,
  logo: '/images/google.png',
  categoryLabel: 'Google',
  executionKind: 'io',
};
