import { LLM_BASE_URL_VARIABLES } from '../../nodes/ai/llm/provider-settings';
import { INTEGRATION_BASE_URL_VARIABLES } from '../../nodes/integrations/http/services';
import { HTTP_CREDENTIALS } from '../../nodes/integrations/http-request/http-credential-names';
import { MCP_CREDENTIALS } from '../../nodes/mcp/mcp-credential-names';
import type { CredentialBinding } from '../../nodes/credential-binding';

/** The 17 providers PySpur lets users configure, in its order, then the integrations it omits. */
export interface ProviderParameter {
  name: string;
  description: string;
  required: boolean;
  type: 'password' | 'text';
}

export interface ProviderConfig {
  id: string;
  name: string;
  description: string;
  category: string;
  parameters: ProviderParameter[];
  icon: string;
}

/** `name:Description` is a required password; flags: `t` text, `opt` not required. */
function param(name: string, description: string, ...flags: ('t' | 'opt')[]): ProviderParameter {
  return { name, description, required: !flags.includes('opt'), type: flags.includes('t') ? 'text' : 'password' };
}

function provider(
  id: string,
  name: string,
  description: string,
  category: string,
  icon: string,
  parameters: ProviderParameter[],
): ProviderConfig {
  return { id, name, description, category, parameters, icon };
}

/** A family of credentials each bound to a base URL setting (credential-binding.ts), base first. */
function boundCredentials(
  id: string,
  name: string,
  description: string,
  icon: string,
  bindings: readonly CredentialBinding[],
  baseLabel: string,
  target: string,
): ProviderConfig {
  return provider(
    id,
    name,
    description,
    'tools',
    icon,
    bindings.flatMap(({ variable, base }) => [
      param(base, `${baseLabel} (or a prefix of it) that ${variable} is sent to`, 't', 'opt'),
      param(variable, `Credential sent to ${target} under ${base}`, 'opt'),
    ]),
  );
}

export const PROVIDERS: readonly ProviderConfig[] = [
  provider('openai', 'OpenAI', "OpenAI's GPT models", 'llm', 'openai', [param('OPENAI_API_KEY', 'OpenAI API Key')]),
  provider('azure-openai', 'Azure OpenAI', 'Azure-hosted OpenAI models', 'llm', 'azure', [
    param('AZURE_OPENAI_API_KEY', 'Azure OpenAI API Key'),
    param('AZURE_OPENAI_ENDPOINT', 'Azure OpenAI Endpoint URL', 't'),
    param('AZURE_OPENAI_API_VERSION', 'API Version (e.g. 2023-05-15)', 't'),
  ]),
  provider('anthropic', 'Anthropic', "Anthropic's Claude models", 'llm', 'anthropic', [
    param('ANTHROPIC_API_KEY', 'Anthropic API Key'),
  ]),
  provider('gemini', 'Google Gemini', "Google's Gemini models", 'llm', 'google', [
    param('GEMINI_API_KEY', 'Gemini API Key'),
  ]),
  provider('deepseek', 'DeepSeek', "DeepSeek's code and chat models", 'llm', 'deepseek', [
    param('DEEPSEEK_API_KEY', 'DeepSeek API Key'),
  ]),
  provider('cohere', 'Cohere', "Cohere's language models", 'llm', 'cohere', [
    param('COHERE_API_KEY', 'Cohere API Key'),
  ]),
  provider('voyage', 'Voyage AI', "Voyage's language models", 'llm', 'voyage', [
    param('VOYAGE_API_KEY', 'Voyage API Key'),
  ]),
  provider('mistral', 'Mistral AI', "Mistral's language models", 'llm', 'mistral', [
    param('MISTRAL_API_KEY', 'Mistral API Key'),
  ]),
  provider('pinecone', 'Pinecone', 'Production-ready vector database', 'vectorstore', 'pinecone', [
    param('PINECONE_API_KEY', 'Pinecone API Key'),
    param('PINECONE_ENVIRONMENT', 'Pinecone Environment', 't'),
    param('PINECONE_INDEX', 'Pinecone Index Name', 't'),
  ]),
  provider('weaviate', 'Weaviate', 'Multi-modal vector search engine', 'vectorstore', 'weaviate', [
    param('WEAVIATE_API_KEY', 'Weaviate API Key'),
    param('WEAVIATE_URL', 'Weaviate Instance URL', 't'),
  ]),
  provider('qdrant', 'Qdrant', 'Vector database for production', 'vectorstore', 'qdrant', [
    param('QDRANT_API_KEY', 'Qdrant API Key'),
    param('QDRANT_URL', 'Qdrant Instance URL', 't'),
  ]),
  provider('chroma', 'Chroma', 'Open-source embedding database', 'vectorstore', 'chroma', [
    param('CHROMA_IN_MEMORY', 'Run Chroma in memory', 't'),
    param('CHROMA_PERSISTENCE_DIR', 'Directory for Chroma persistence', 't'),
    param('CHROMA_HOST', 'Chroma server host', 't'),
    param('CHROMA_PORT', 'Chroma server port', 't'),
    param('CHROMA_COLLECTION', 'Chroma collection name', 't'),
  ]),
  provider('supabase', 'Supabase', 'Open-source vector database', 'vectorstore', 'supabase', [
    param('SUPABASE_URL', 'Supabase Project URL', 't'),
    param('SUPABASE_ANON_KEY', 'Supabase Anonymous Key', 'opt'),
    param('SUPABASE_SERVICE_ROLE_KEY', 'Supabase Service Role Key', 'opt'),
  ]),
  provider('reddit', 'Reddit', 'Reddit API integration', 'social', 'logos:reddit-icon', [
    param('REDDIT_CLIENT_ID', 'Reddit API Client ID'),
    param('REDDIT_CLIENT_SECRET', 'Reddit API Client Secret'),
    param('REDDIT_USERNAME', 'Reddit Username', 't', 'opt'),
    param('REDDIT_PASSWORD', 'Reddit Password', 'opt'),
    param('REDDIT_USER_AGENT', 'Reddit API User Agent', 't', 'opt'),
  ]),
  provider('firecrawl', 'Firecrawl', 'Web scraping and crawling service', 'scraping', 'solar:spider-bold', [
    param('FIRECRAWL_API_KEY', 'Firecrawl API Key'),
  ]),
  provider('slack', 'Slack', 'Slack messaging and notification service', 'messaging', 'logos:slack-icon', [
    param('SLACK_BOT_TOKEN', 'Slack Bot User OAuth Token (starts with xoxb-)'),
    param('SLACK_USER_TOKEN', 'Slack User OAuth Token (starts with xoxp-)', 'opt'),
  ]),
  provider('exa', 'Exa', 'Exa web search API', 'search', 'solar:search-bold', [param('EXA_API_KEY', 'Exa API Key')]),
  // Not in PySpur's list, though its nodes read them from the environment: listed after its 17.
  provider('github', 'GitHub', 'GitHub repositories, pull requests and issues', 'developer', 'logos:github-icon', [
    param('GITHUB_ACCESS_TOKEN', 'GitHub Personal Access Token'),
  ]),
  provider('google', 'Google Sheets', 'Read Google Sheets ranges', 'productivity', 'logos:google-icon', [
    param('GOOGLE_ACCESS_TOKEN', 'Google OAuth Access Token (Sheets read scope)'),
  ]),
  provider('jina', 'Jina AI', 'Jina Reader: web pages as Markdown', 'scraping', 'solar:document-text-bold', [
    param('JINA_API_KEY', 'Jina API Key', 'opt'),
  ]),
  provider('resend', 'Resend', 'Email delivery API', 'email', 'solar:letter-bold', [
    param('RESEND_API_KEY', 'Resend API Key'),
  ]),
  provider('sendgrid', 'SendGrid', 'Twilio SendGrid email delivery', 'email', 'solar:letter-bold', [
    param('SENDGRID_API_KEY', 'SendGrid API Key'),
  ]),
  // MCPToolNode headers name these: each key is sent only to servers under its base (mcp-credentials.ts).
  boundCredentials(
    'mcp',
    'MCP servers',
    'Credentials of Model Context Protocol servers, each bound to its server URL',
    'solar:plug-circle-bold',
    MCP_CREDENTIALS,
    'Server URL',
    'the server',
  ),
  // HTTPRequestNode headers name these: each key is sent only to request URLs under its base.
  boundCredentials(
    'http',
    'HTTP requests',
    'Credentials of HTTP Request nodes, each bound to the base URL it may be sent to',
    'solar:global-bold',
    HTTP_CREDENTIALS,
    'Base URL',
    'requests',
  ),
];

const PARAMETERS = new Map(PROVIDERS.flatMap((p) => p.parameters.map((param) => [param.name, param] as const)));

/** PySpur's 34 variable names in provider order, then the integrations' (what `GET /env-mgmt/` answers). */
export const KNOWN_VARIABLES: readonly string[] = [...PARAMETERS.keys()];

/**
 * Settable too, though PySpur's list has no entry for them: where each LLM provider and each
 * integration's service is reached (a proxy, a gateway, a local Ollama, GitHub Enterprise, or a
 * test server) and the xAI key.
 */
const EXTRA_PARAMETERS = new Map<string, ProviderParameter>(
  [
    ...[...LLM_BASE_URL_VARIABLES, ...INTEGRATION_BASE_URL_VARIABLES].map((name) =>
      param(name, `${name.replace(/_(API_BASE|BASE_URL|BASE)$/, '')} base URL`, 't', 'opt'),
    ),
    param('XAI_API_KEY', 'xAI API Key', 'opt'),
    // Written by POST /google/store_token/ beside GOOGLE_ACCESS_TOKEN.
    param('GOOGLE_ACCESS_TOKEN_EXPIRES_AT', 'When the stored Google token expires (ISO 8601)', 't', 'opt'),
  ].map((p) => [p.name, p]),
);

export function findParameter(name: string): ProviderParameter | undefined {
  return PARAMETERS.get(name) ?? EXTRA_PARAMETERS.get(name);
}

/**
 * Every name env management stores, the one list its writers accept: the providers' parameters,
 * the base URLs the LLM providers and integrations read, and the extras above. Anything else
 * (`NODE_OPTIONS`, `PATH`, `SPUR_*`, a lower-case spelling) is refused, though stored values never
 * reach any process's environment: nodes read them through env management by these names only.
 */
export const SETTABLE_VARIABLES = [...PARAMETERS.keys(), ...EXTRA_PARAMETERS.keys()] as [string, ...string[]];
