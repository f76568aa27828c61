import { type SecretReader, missingSettings } from '../../rag/embedder';
import { EMBEDDING_MODELS, EMBEDDING_PROVIDERS } from '../../rag/embedding-models';
import { VECTOR_STORES } from '../../rag/vector-stores';

/** `GET /env-mgmt/embedding-models/`: PySpur's map by model id, each saying whether it is usable now. */
export async function embeddingModelListing(secret: SecretReader) {
  const entries = [];
  for (const model of EMBEDDING_MODELS) {
    const missing = await missingSettings(secret, model);
    entries.push([
      model.id,
      {
        ...model,
        required_env_vars: [...EMBEDDING_PROVIDERS[model.provider].required],
        usable: missing.length === 0,
        missing_env_vars: missing,
      },
    ] as const);
  }
  return Object.fromEntries(entries);
}

/** `GET /env-mgmt/vector-stores/`: PySpur's map by store id; only stores this server writes to are usable. */
export function vectorStoreListing() {
  return Object.fromEntries(
    VECTOR_STORES.map((s) => [
      s.id,
      {
        id: s.id,
        name: s.name,
        description: s.description,
        requires_api_key: s.requires_api_key,
        api_key_env_var: s.api_key_env_var,
        required_env_vars: [...s.required_env_vars],
        usable: s.supported,
        unusable_reason: s.supported ? null : 'Not supported by this server: Spur stores vectors in LanceDB',
      },
    ]),
  );
}
