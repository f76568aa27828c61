/**
 * Vector stores as PySpur lists them (`GET /env-mgmt/vector-stores/`). Spur stores vectors in
 * LanceDB (embedded, or on object storage in production); PySpur's server-backed stores are listed
 * so its UI shows them, but marked unusable: this server does not write to them.
 */
export interface VectorStoreInfo {
  id: string;
  name: string;
  description: string;
  requires_api_key: boolean;
  api_key_env_var: string | null;
  required_env_vars: string[];
  supported: boolean;
}

export const DEFAULT_VECTOR_DB = 'lancedb';

export const VECTOR_STORES: readonly VectorStoreInfo[] = [
  {
    id: 'lancedb',
    name: 'LanceDB',
    description: 'Embedded vector store (local folder or object storage); no server needed',
    requires_api_key: false,
    api_key_env_var: null,
    required_env_vars: [],
    supported: true,
  },
  {
    id: 'chroma',
    name: 'Chroma',
    description: 'Open-source embedding database',
    requires_api_key: false,
    api_key_env_var: null,
    required_env_vars: [
      'CHROMA_IN_MEMORY',
      'CHROMA_PERSISTENCE_DIR',
      'CHROMA_HOST',
      'CHROMA_PORT',
      'CHROMA_COLLECTION',
    ],
    supported: false,
  },
  {
    id: 'pinecone',
    name: 'Pinecone',
    description: 'Production-ready vector database',
    requires_api_key: true,
    api_key_env_var: 'PINECONE_API_KEY',
    required_env_vars: ['PINECONE_API_KEY', 'PINECONE_ENVIRONMENT', 'PINECONE_INDEX'],
    supported: false,
  },
  {
    id: 'weaviate',
    name: 'Weaviate',
    description: 'Multi-modal vector search engine',
    requires_api_key: true,
    api_key_env_var: 'WEAVIATE_API_KEY',
    required_env_vars: ['WEAVIATE_API_KEY', 'WEAVIATE_URL'],
    supported: false,
  },
  {
    id: 'supabase',
    name: 'Supabase',
    description: 'Open-source vector database',
    requires_api_key: false,
    api_key_env_var: null,
    required_env_vars: ['SUPABASE_URL'],
    supported: false,
  },
  {
    id: 'qdrant',
    name: 'Qdrant',
    description: 'Vector database for production',
    requires_api_key: true,
    api_key_env_var: 'QDRANT_API_KEY',
    required_env_vars: ['QDRANT_API_KEY', 'QDRANT_URL'],
    supported: false,
  },
];

/** Names the UI sends for "the default store" map onto LanceDB; others must be supported. */
export function resolveVectorDb(requested: string): VectorStoreInfo | undefined {
  return VECTOR_STORES.find((s) => s.id === requested.toLowerCase());
}
