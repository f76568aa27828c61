import { z } from 'zod';
import { NotFoundError } from '../../errors';
import { defineRoute, type MountableRoute } from '../../http/route';
import type { WorkflowService } from '../workflows/workflows.service';
import { WorkflowCreateRequest, WorkflowResponse } from '../workflows/workflows.schemas';
import { TEMPLATES } from './library';
import { type TemplateInfo, TemplateSchema } from './template';

const tags = ['templates'];

function listing({ name, description, features, file_name }: TemplateInfo): TemplateInfo {
  return { name, description, features, file_name };
}

/** The dashboard's "start from a template": Spur's own templates, PySpur's routes and shapes. */
export function templateRoutes(workflows: WorkflowService): MountableRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/templates/',
      summary: 'List the workflow templates',
      tags,
      response: z.array(TemplateSchema),
      handler: () => TEMPLATES.map(listing),
    }),
    defineRoute({
      method: 'post',
      path: '/templates/instantiate/',
      permission: 'build',
      summary: 'Create a workflow from a template',
      tags,
      body: TemplateSchema,
      response: WorkflowResponse,
      errors: [404],
      handler: async ({ body }) => {
        // Found by file name, as PySpur does; the rest of the body is the listing echoed back.
        const template = TEMPLATES.find((t) => t.file_name === body.file_name);
        if (!template) throw new NotFoundError('Template not found', 'TEMPLATE_NOT_FOUND');
        return workflows.create(
          WorkflowCreateRequest.parse({
            name: template.name,
            description: template.description,
            definition: template.definition,
          }),
        );
      },
    }),
  ];
}
