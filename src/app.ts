import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import type { Config } from './config';
import { apiKeyMiddleware, parseKeyHashes } from './http/api-keys';
import { browserSessions } from './http/browser-session';
import { clientAddressOf, loginAttempts } from './http/login-attempts';
import { corsMiddleware } from './http/cors';
import { errorMiddleware } from './http/error-middleware';
import { buildOpenApiDocument, createOpenApiRegistry } from './http/openapi';
import { mountDocsPage } from './http/docs-page';
import { fallbackMiddleware } from './http/fallback';
import type { MountableRoute } from './http/route';
import { valueBody } from './http/value-body';
import type { Logger } from './logger';
import { envMgmtRoutes } from './modules/env-mgmt/env-mgmt.routes';
import { googleTokenRoutes } from './modules/env-mgmt/google-token.routes';
import { datasetRoutes } from './modules/datasets/datasets.routes';
import { outputFileRoutes } from './modules/output-files/output-files.routes';
import { fileRoutes } from './modules/files/files.routes';
import { templateRoutes } from './modules/templates/templates.routes';
import { aiRoutes } from './modules/ai/ai.routes';
import { evalRoutes } from './modules/evals/evals.routes';
import { type HealthProbe, healthRoutes } from './modules/health/health.routes';
import { nodeTypeRoutes } from './modules/node-types/node-types.routes';
import { pauseRoutes } from './modules/pauses/pauses.routes';
import { ragRoutes } from './modules/rag/rag.routes';
import { runRoutes } from './modules/runs/runs.routes';
import { callbackRoutes } from './modules/callbacks/callbacks.routes';
import { runEventRoutes } from './modules/runs/run-events.routes';
import { rerunRoutes } from './modules/runs/rerun.routes';
import { workflowRoutes } from './modules/workflows/workflows.routes';
import { sessionRoutes } from './modules/sessions/sessions.routes';
import { userRoutes } from './modules/users/users.routes';
import { chatCompletionRoutes } from './modules/openai-compat/chat-completions.routes';
import type { Services } from './services';
import { mountLogin } from './web-ui/login.routes';
import { loadWebUiExport, webUiMiddleware } from './web-ui/static-site';

export const API_PREFIX = '/api';

export interface AppDeps {
  config: Pick<Config, 'http' | 'webUi'>;
  /** Keys browser session ids (the server's secret key, so every replica accepts them). */
  secretKey?: Buffer;
  logger: Logger;
  services: Services;
  probes: Record<string, HealthProbe>;
}

/** Builds the Koa app without listening: main.ts listens, tests may use `app.callback()`. */
export function createApp({ config, logger, services, probes, secretKey = randomBytes(32) }: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  const api = new Router({ prefix: API_PREFIX });
  const registry = createOpenApiRegistry();
  const routes: MountableRoute[] = [
    ...healthRoutes(probes),
    ...nodeTypeRoutes(),
    ...pauseRoutes(services.pauses, services.idempotency),
    ...workflowRoutes({
      ...services,
      uploadLimits: { maxFiles: config.http.maxUploadFiles, maxFileBytes: config.http.maxUploadBytes },
    }),
    ...runRoutes({ starter: services.runStarter, startBatch: services.startBatch, reader: services.runs, idempotency: services.idempotency, recoverRun: services.recoverRun }),
    ...callbackRoutes(services.callbacks),
    ...runEventRoutes({ hub: services.runEvents, events: services.runRecords.events, runOf: (id) => services.runs.get(id) }),
    ...rerunRoutes(services.rerunStarter),
    ...fileRoutes(services.storedFiles),
    ...templateRoutes(services.workflows),
    ...aiRoutes(services.aiAssist),
    ...evalRoutes(),
    // Before env-mgmt's `/env-mgmt/{name}`, which would take `/env-mgmt/embedding-models/` for a name.
    ...ragRoutes(services.rag, { maxFiles: config.http.maxUploadFiles, maxFileBytes: config.http.maxUploadBytes }),
    ...envMgmtRoutes(services.env),
    ...googleTokenRoutes(services.env),
    ...datasetRoutes(services.datasets),
    ...outputFileRoutes(services.outputFiles),
    ...userRoutes(services.users),
    ...sessionRoutes(services.sessions),
    ...chatCompletionRoutes(services.chatCompletions),
  ];
  const limits = { maxJsonBytes: config.http.maxJsonBytes, valueBody: valueBody(services.values) };
  for (const route of routes) route.mount(api, registry, limits);

  const openApiDocument = buildOpenApiDocument(registry, API_PREFIX);
  api.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument;
  });
  mountDocsPage(api, `${API_PREFIX}/openapi.json`);

  app.use(errorMiddleware(logger));
  app.use(corsMiddleware(config.http.corsOrigins));
  const digests = parseKeyHashes(config.http.apiKeyHashes);
  const sessions = browserSessions(secretKey, digests, config.http.sessionTtlMs, services.browserSessionStore);
  const isApi = (path: string) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
  app.use(apiKeyMiddleware(digests, { openPaths: new Set([`${API_PREFIX}/health`]), guarded: isApi, sessions }));
  const site = new Router();
  mountLogin(site, { digests, sessions, attempts: loginAttempts(config.http.login), clientAddress: clientAddressOf(config.http.login.trustForwardedFor) });
  app.use(site.routes());
  app.use(webUiMiddleware(loadWebUiExport(config.webUi), {
    reserved: (path) => isApi(path) || path === '/login' || path === '/logout',
    ...(digests.length > 0 ? { loggedIn: (ctx) => sessions.valid(ctx) } : {}),
  }));
  app.use(api.routes());
  app.use(fallbackMiddleware(api));
  app.on('error', (err: unknown) => logger.error({ err }, 'unhandled error in koa'));
  return app;
}
