import { OpenAPIRegistry, OpenApiGeneratorV3, zodToOpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from '../zod';

const ValidationErrorItem = z.object({
  type: z.string(),
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  input: z.unknown(),
  ctx: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Names a schema declared below the api (plain zod, in a domain the worker shares) as the OpenAPI
 * component `refId`, in place: every route and schema using that instance refers to the component,
 * as `.openapi(refId)` would make them, without the api declaring a second copy of the shape.
 */
export function nameComponent(schema: z.ZodType, refId: string): void {
  const current = zodToOpenAPIRegistry.get(schema);
  zodToOpenAPIRegistry.add(schema, { ...current, _internal: { ...current?._internal, refId } });
}

/** A registry pre-loaded with the two error envelopes every route refers to. */
export function createOpenApiRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.register('HTTPValidationError', z.object({ detail: z.array(ValidationErrorItem) }));
  registry.register('HTTPError', z.object({ detail: z.string() }));
  return registry;
}

export function buildOpenApiDocument(registry: OpenAPIRegistry, serverUrl: string) {
  return new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: '3.0.3',
    info: {
      title: 'Spur API',
      version: '1.0.0',
      description: "PySpur's backend REST interface, every run executed durably on Temporal.",
    },
    servers: [{ url: serverUrl }],
  });
}
