/**
 * The HTTP services the integration nodes call, as data: where each one lives by default, which
 * env-management variable replaces that base URL (exactly: scheme, host, port and path prefix;
 * the node appends the endpoint path), and how a request proves who it is.
 */

/** How a service's requests authenticate, read from env management at execution time. */
export type ServiceAuth =
  /** `Authorization: Bearer <variable>`; `optional` sends nothing when the variable is unset. */
  | { kind: 'bearer'; variable: string; optional?: boolean }
  /** The credential in its own header (`x-api-key: …`). */
  | { kind: 'header'; header: string; variable: string }
  /** No credential, or one the node obtains itself (Reddit's OAuth token). */
  | { kind: 'none' };

export interface ServiceSpec {
  /** The service's name in failure messages ("GitHub API error 404: Not Found"). */
  label: string;
  baseVariable: string;
  /** Read when `baseVariable` is unset (Reddit's token endpoint falls back to its API base). */
  fallbackVariable?: string;
  defaultBase: string;
  auth: ServiceAuth;
  /** Headers every request to this service carries. */
  headers?: Record<string, string>;
}

const bearer = (variable: string): ServiceAuth => ({ kind: 'bearer', variable });

export const SERVICES = {
  github: {
    label: 'GitHub',
    baseVariable: 'GITHUB_API_BASE',
    defaultBase: 'https://api.github.com',
    auth: bearer('GITHUB_ACCESS_TOKEN'),
    headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
  },
  slackBot: {
    label: 'Slack',
    baseVariable: 'SLACK_API_BASE',
    defaultBase: 'https://slack.com/api',
    auth: bearer('SLACK_BOT_TOKEN'),
  },
  slackUser: {
    label: 'Slack',
    baseVariable: 'SLACK_API_BASE',
    defaultBase: 'https://slack.com/api',
    auth: bearer('SLACK_USER_TOKEN'),
  },
  firecrawl: {
    label: 'Firecrawl',
    baseVariable: 'FIRECRAWL_API_BASE',
    defaultBase: 'https://api.firecrawl.dev',
    auth: bearer('FIRECRAWL_API_KEY'),
  },
  exa: {
    label: 'Exa',
    baseVariable: 'EXA_API_BASE',
    defaultBase: 'https://api.exa.ai',
    auth: { kind: 'header', header: 'x-api-key', variable: 'EXA_API_KEY' },
  },
  jina: {
    label: 'Jina Reader',
    baseVariable: 'JINA_API_BASE',
    defaultBase: 'https://r.jina.ai',
    auth: { kind: 'bearer', variable: 'JINA_API_KEY', optional: true },
  },
  googleSheets: {
    label: 'Google Sheets',
    baseVariable: 'GOOGLE_SHEETS_API_BASE',
    defaultBase: 'https://sheets.googleapis.com',
    auth: bearer('GOOGLE_ACCESS_TOKEN'),
  },
  youtube: {
    label: 'YouTube',
    baseVariable: 'YOUTUBE_API_BASE',
    defaultBase: 'https://www.youtube.com',
    auth: { kind: 'none' },
    headers: { 'accept-language': 'en-US' },
  },
  reddit: {
    label: 'Reddit',
    baseVariable: 'REDDIT_API_BASE',
    defaultBase: 'https://oauth.reddit.com',
    auth: { kind: 'none' },
  },
  redditAuth: {
    label: 'Reddit',
    baseVariable: 'REDDIT_AUTH_BASE',
    fallbackVariable: 'REDDIT_API_BASE',
    defaultBase: 'https://www.reddit.com',
    auth: { kind: 'none' },
  },
  resend: {
    label: 'Resend',
    baseVariable: 'RESEND_API_BASE',
    defaultBase: 'https://api.resend.com',
    auth: bearer('RESEND_API_KEY'),
  },
  sendgrid: {
    label: 'SendGrid',
    baseVariable: 'SENDGRID_API_BASE',
    defaultBase: 'https://api.sendgrid.com',
    auth: bearer('SENDGRID_API_KEY'),
  },
} as const satisfies Record<string, ServiceSpec>;

/** Every `<SERVICE>_API_BASE`-style variable, settable in env management. */
export const INTEGRATION_BASE_URL_VARIABLES: readonly string[] = [
  ...new Set(Object.values(SERVICES).map((s: ServiceSpec) => s.baseVariable)),
];

/** Reddit's app credentials and login go to its token endpoint, whose base falls back to the API's. */
const REDDIT_CREDENTIALS = ['REDDIT_CLIENT_ID', 'REDDIT_CLIENT_SECRET', 'REDDIT_USERNAME', 'REDDIT_PASSWORD'];

/** The base URL settings each integration credential is sent to. */
export const INTEGRATION_KEY_BASES: Readonly<Record<string, readonly string[]>> = Object.fromEntries([
  ...Object.values(SERVICES).flatMap((s: ServiceSpec) =>
    s.auth.kind === 'none'
      ? []
      : [[s.auth.variable, [s.baseVariable, ...(s.fallbackVariable ? [s.fallbackVariable] : [])]] as const],
  ),
  ...REDDIT_CREDENTIALS.map(
    (name) => [name, [SERVICES.redditAuth.baseVariable, SERVICES.reddit.baseVariable]] as const,
  ),
]);
