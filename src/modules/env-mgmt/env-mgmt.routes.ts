import { z } from 'zod';
import { defineRoute, type MountableRoute } from '../../http/route';
import { type EnvService, SettableName } from './env-mgmt.service';
import { PROVIDERS } from './providers';

const tags = ['env-mgmt'];
const NameParams = z.object({ name: z.string().min(1).max(200) });
const Message = z.object({ message: z.string() });
const ProviderSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  category: z.string(),
  parameters: z.array(
    z.object({ name: z.string(), description: z.string(), required: z.boolean(), type: z.enum(['password', 'text']) }),
  ),
  icon: z.string(),
});
// Only Spur's own variable names: anything else (NODE_OPTIONS, PATH, SPUR_*) is a 422 naming the allowed set.
const SetKeyRequest = z.object({
  name: SettableName,
  value: z
    .string()
    .max(64 * 1024)
    .nullable()
    .optional(),
});

export function envMgmtRoutes(env: EnvService): MountableRoute[] {
  return [
    // Before `/env-mgmt/{name}`, which would otherwise take `anon-data` for a variable name.
    defineRoute({
      method: 'get',
      path: '/env-mgmt/anon-data/',
      summary: 'Whether anonymous telemetry is disabled: always true, Spur sends none',
      tags,
      response: z.boolean(),
      handler: () => true,
    }),
    defineRoute({
      method: 'get',
      path: '/env-mgmt/providers',
      summary: 'Provider configurations',
      tags,
      response: z.array(ProviderSchema),
      handler: () => PROVIDERS,
    }),
    defineRoute({
      method: 'get',
      path: '/env-mgmt/',
      summary: 'Names of all settable variables',
      tags,
      response: z.array(z.string()),
      handler: () => env.names(),
    }),
    defineRoute({
      method: 'post',
      path: '/env-mgmt/',
      permission: 'credentials.manage',
      audit: { action: 'credential.set' },
      summary: 'Set a variable (stored encrypted)',
      tags,
      body: SetKeyRequest,
      response: Message,
      errors: [400],
      handler: ({ body }) => env.set(body.name, body.value),
    }),
    defineRoute({
      method: 'get',
      path: '/env-mgmt/{name}',
      summary: 'A variable, masked',
      tags,
      params: NameParams,
      response: z.object({ name: z.string(), value: z.string() }),
      errors: [404],
      handler: ({ params }) => env.get(params.name),
    }),
    defineRoute({
      method: 'delete',
      path: '/env-mgmt/{name}',
      permission: 'credentials.manage',
      summary: 'Remove a variable',
      tags,
      params: NameParams,
      response: Message,
      errors: [404],
      handler: ({ params }) => env.remove(params.name),
    }),
  ];
}
