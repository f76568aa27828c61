import { z } from 'zod';

/** What an MCPToolNode returns: the result's text, its JSON, and every content item. */
export const McpToolOutput = z.object({
  text: z.string(),
  json: z.unknown().nullable(),
  content: z.array(z.record(z.string(), z.unknown())),
});
export type McpToolOutputValue = z.infer<typeof McpToolOutput>;

const ContentItem = z.looseObject({ type: z.string() });

function asDataUri(mimeType: unknown, data: unknown): string {
  return `data:${typeof mimeType === 'string' ? mimeType : 'application/octet-stream'};base64,${typeof data === 'string' ? data : ''}`;
}

/** One content item in the node's output: binary content (images, audio) as data URIs, as run inputs carry files. */
function contentItem(item: z.infer<typeof ContentItem>): Record<string, unknown> {
  switch (item.type) {
    case 'text':
      return { type: 'text', text: typeof item.text === 'string' ? item.text : '' };
    case 'image':
    case 'audio':
      return { type: item.type, mime_type: item.mimeType ?? null, data_uri: asDataUri(item.mimeType, item.data) };
    case 'resource': {
      const resource = (item.resource ?? {}) as Record<string, unknown>;
      return {
        type: 'resource',
        uri: resource.uri ?? null,
        mime_type: resource.mimeType ?? null,
        ...(typeof resource.text === 'string' ? { text: resource.text } : {}),
        ...(typeof resource.blob === 'string' ? { data_uri: asDataUri(resource.mimeType, resource.blob) } : {}),
      };
    }
    case 'resource_link':
      return { type: 'resource_link', uri: item.uri ?? null, name: item.name ?? null };
    default:
      return { type: item.type };
  }
}

function parsedJson(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return null;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return null;
  }
}

/**
 * A tool result as a node output: `text` joins the text items, `json` is the structured content
 * (or the text, when it is one JSON object or array), `content` lists every item.
 */
export function toolOutput(result: Record<string, unknown>): McpToolOutputValue {
  const items = z
    .array(ContentItem)
    .catch([])
    .parse(result.content ?? []);
  const content = items.map(contentItem);
  const text = content
    .filter((c) => c.type === 'text')
    .map((c) => c.text as string)
    .join('\n');
  const json = result.structuredContent ?? parsedJson(text);
  return { text, json: json ?? null, content };
}

/** The words of a tool's error result (`isError: true`): its text items. */
export function errorText(result: Record<string, unknown>): string {
  const text = toolOutput(result).text.trim();
  return text || 'the tool reported an error without a message';
}
