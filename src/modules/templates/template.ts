import { z } from '../../zod';

/** What `GET /templates/` lists and `POST /templates/instantiate/` takes back (PySpur's TemplateSchema). */
export const TemplateSchema = z
  .object({
    name: z.string().max(500),
    description: z.string().max(5000),
    features: z.array(z.string().max(200)).max(50),
    file_name: z.string().min(1).max(200),
  })
  .openapi('Template');
export type TemplateInfo = z.output<typeof TemplateSchema>;

/** One of Spur's own templates: its listing plus the workflow definition it instantiates into. */
export interface SpurTemplate extends TemplateInfo {
  definition: Record<string, unknown>;
}
