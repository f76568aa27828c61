import { z } from 'zod';
import { pyStr } from '../logic/py-str.js';
import { integrationNode, required } from './http/integration-node.js';
import { connect } from './http/service-client.js';
import { SERVICES } from './http/services.js';

const valueRange = z.looseObject({ values: z.array(z.array(z.unknown())).optional() });

/** Reads a cell range (e.g. `Sheet1!A1:B10`) with the Sheets API v4; `data` is Python's `str()` of the rows. */
export const googleSheetsReadNode = integrationNode({
  name: 'GoogleSheetsReadNode',
  displayName: 'GoogleSheetsRead',
  category: 'Integrations',
  tag: 'GSRN #6F42C1',
  logo: '/images/google.png',
  categoryLabel: 'Google',
  output: z.object({ data: z.string() }),
  config: { spreadsheet_id: z.string().default(''), range: z.string().default('') },
  // Which spreadsheet the credential reads stays the operator's; the model picks the cells.
  modelSettable: ['range'],
  async run(config, _input, ctx) {
    const api = await connect(ctx, SERVICES.googleSheets);
    const path = `/v4/spreadsheets/${encodeURIComponent(required(config.spreadsheet_id, 'spreadsheet_id'))}/values/${encodeURIComponent(required(config.range, 'range'))}`;
    const range = await api.get(path, valueRange);
    return { data: pyStr(range.values ?? []) };
  },
});
