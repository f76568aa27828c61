import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Once per process, before any schema is declared: adds `.openapi()` (component names) to zod.
// Schemas that name an OpenAPI component import `z` from here so the extension is in place.
extendZodWithOpenApi(z);

export { z };
