import type { SpurTemplate } from '../template';
import { link, node, outputs } from './build';

const CLEAN = `import json
rows = json.loads(input_model.raw.records)
seen, clean, dropped = set(), [], 0
for row in rows:
    email = str(row.get("email", "")).strip().lower()
    name = " ".join(str(row.get("name", "")).split()).title()
    if not email or "@" not in email or email in seen:
        dropped += 1
        continue
    seen.add(email)
    clean.append({"name": name, "email": email})
return {"rows": clean, "kept": len(clean), "dropped": dropped}`;

export const dataCleaning: SpurTemplate = {
  file_name: 'data-cleaning.json',
  name: 'Clean a list of contacts with Python',
  description:
    'A Python step that trims and normalises names and e-mails, drops invalid and duplicate rows, and reports what it removed.',
  features: ['Python', 'Data cleaning'],
  definition: {
    nodes: [
      node('raw', 'InputNode', 0, outputs({ records: 'string' })),
      node('clean', 'PythonFuncNode', 1, {
        code: CLEAN,
        ...outputs({ rows: 'array', kept: 'integer', dropped: 'integer' }),
      }),
      node('cleaned', 'OutputNode', 2, {
        ...outputs({ rows: 'array', kept: 'integer', dropped: 'integer' }),
        output_map: { rows: 'clean.rows', kept: 'clean.kept', dropped: 'clean.dropped' },
      }),
    ],
    links: [link('raw', 'clean'), link('clean', 'cleaned')],
    test_inputs: [
      {
        id: 1,
        records:
          '[{"name": "  ada  lovelace ", "email": "ADA@example.org"}, {"name": "Ada", "email": "ada@example.org "}, {"name": "Bob", "email": "not-an-email"}]',
      },
    ],
    spur_type: 'workflow',
  },
};
