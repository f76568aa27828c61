/**
 * The embedding models Spur offers (PySpur's list, plus Ollama), and how each is reached. Every
 * provider here speaks OpenAI's `/embeddings` protocol (natively or through its OpenAI-compatible
 * endpoint), so one client serves them all; only the base URL, key and wire details differ.
 */
export type EmbeddingProviderName = 'OpenAI' | 'AzureOpenAI' | 'Cohere' | 'Voyage' | 'Mistral' | 'Gemini' | 'Ollama';

export interface EmbeddingProviderAccess {
  /** Settings (env management) that must be set before the model can be used. */
  required: string[];
  /** Setting that overrides the base URL, and the URL used without it. */
  baseUrlVariable?: string;
  defaultBaseUrl: string;
  /** Voyage answers only `base64` (the SDK's default); the others are asked for floats. */
  encodingFormat: 'float' | 'base64';
  /** Whether the `dimensions` request field may be sent (OpenAI's text-embedding-3 models). */
  sendsDimensions: boolean;
}

export const EMBEDDING_PROVIDERS: Record<EmbeddingProviderName, EmbeddingProviderAccess> = {
  OpenAI: {
    required: ['OPENAI_API_KEY'],
    baseUrlVariable: 'OPENAI_API_BASE',
    defaultBaseUrl: 'https://api.openai.com/v1',
    encodingFormat: 'float',
    sendsDimensions: true,
  },
  AzureOpenAI: {
    required: ['AZURE_OPENAI_API_KEY', 'AZURE_OPENAI_ENDPOINT', 'AZURE_OPENAI_API_VERSION'],
    defaultBaseUrl: '',
    encodingFormat: 'float',
    sendsDimensions: true,
  },
  Cohere: {
    required: ['COHERE_API_KEY'],
    defaultBaseUrl: 'https://api.cohere.ai/compatibility/v1',
    encodingFormat: 'float',
    sendsDimensions: false,
  },
  Voyage: {
    required: ['VOYAGE_API_KEY'],
    defaultBaseUrl: 'https://api.voyageai.com/v1',
    encodingFormat: 'base64',
    sendsDimensions: false,
  },
  Mistral: {
    required: ['MISTRAL_API_KEY'],
    defaultBaseUrl: 'https://api.mistral.ai/v1',
    encodingFormat: 'float',
    sendsDimensions: false,
  },
  Gemini: {
    required: ['GEMINI_API_KEY'],
    baseUrlVariable: 'GEMINI_API_BASE',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai',
    encodingFormat: 'float',
    sendsDimensions: false,
  },
  Ollama: {
    required: [],
    baseUrlVariable: 'OLLAMA_BASE_URL',
    defaultBaseUrl: 'http://127.0.0.1:11434',
    encodingFormat: 'float',
    sendsDimensions: false,
  },
};

export interface EmbeddingModelInfo {
  id: string;
  provider: EmbeddingProviderName;
  name: string;
  dimensions: number;
  max_input_length: number;
  supported_encoding_formats: string[] | null;
}

const COHERE_FORMATS = ['float', 'int8', 'uint8', 'binary', 'ubinary'];

/** `[id, provider, name, dimensions, max_input_length]` rows, in PySpur's order, Ollama last. */
const ROWS: [string, EmbeddingProviderName, string, number, number][] = [
  ['openai/text-embedding-3-small', 'OpenAI', 'Text Embedding 3 Small', 1536, 8191],
  ['openai/text-embedding-3-large', 'OpenAI', 'Text Embedding 3 Large', 3072, 8191],
  ['azure/text-embedding-3-small', 'AzureOpenAI', 'Azure Text Embedding 3 Small', 1536, 8191],
  ['azure/text-embedding-3-large', 'AzureOpenAI', 'Azure Text Embedding 3 Large', 3072, 8191],
  ['cohere/embed-english-v3.0', 'Cohere', 'Cohere Embed English V3', 1024, 8191],
  ['cohere/embed-english-light-v3.0', 'Cohere', 'Cohere Embed English Light V3', 384, 8191],
  ['cohere/embed-multilingual-v3.0', 'Cohere', 'Cohere Embed Multilingual V3', 1024, 8191],
  ['cohere/embed-multilingual-light-v3.0', 'Cohere', 'Cohere Embed Multilingual Light V3', 384, 8191],
  ['voyage/voyage-3-large', 'Voyage', 'Voyage 3 Large', 1024, 32000],
  ['voyage/voyage-3', 'Voyage', 'Voyage 3', 1024, 32000],
  ['voyage/voyage-3-lite', 'Voyage', 'Voyage 3 Lite', 512, 32000],
  ['voyage/voyage-code-3', 'Voyage', 'Voyage Code 3', 1024, 32000],
  ['voyage/voyage-finance-2', 'Voyage', 'Voyage Finance 2', 1024, 32000],
  ['voyage/voyage-law-2', 'Voyage', 'Voyage Law 2', 1024, 16000],
  ['mistral/mistral-embed', 'Mistral', 'Mistral Embed', 1024, 8191],
  ['gemini/text-embedding-004', 'Gemini', 'Gemini Text Embedding', 768, 3072],
  ['ollama/nomic-embed-text', 'Ollama', 'Ollama Nomic Embed Text', 768, 8192],
  ['ollama/mxbai-embed-large', 'Ollama', 'Ollama mxbai Embed Large', 1024, 512],
  ['ollama/all-minilm', 'Ollama', 'Ollama all-MiniLM', 384, 256],
];

export const EMBEDDING_MODELS: readonly EmbeddingModelInfo[] = ROWS.map(
  ([id, provider, name, dimensions, max_input_length]) => ({
    id,
    provider,
    name,
    dimensions,
    max_input_length,
    supported_encoding_formats: provider === 'Cohere' ? COHERE_FORMATS : null,
  }),
);

const byId = new Map(EMBEDDING_MODELS.map((m) => [m.id, m]));

export function findEmbeddingModel(id: string): EmbeddingModelInfo | undefined {
  return byId.get(id);
}

/** The provider's own model name: the part after `<provider>/` (Azure: the deployment name). */
export function remoteModelName(id: string): string {
  return id.slice(id.indexOf('/') + 1);
}
