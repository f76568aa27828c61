import { httpMetrics } from './http/http-metrics';
import { workspaceScope } from './db/workspace-scope';
import { scheduleRoutes } from './modules/schedules/schedules.routes';
import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import type { Config } from './config/settings';
import { allowedHostNames } from './http/allowed-hosts';
import { anonymousAllowlist } from './http/allowlist';
import { callerId, parseKeyHashes } from './http/api-keys';
import { withRunCaller } from './runs/run-caller';
import { callerOf, starterName } from './access/caller';
import { FORM_TYPE } from './http/body-types';
import { browserSessions } from './http/browser-session';
import { clientAddressOf, loginAttempts } from './http/login-attempts';
import { errorMiddleware } from './http/error-middleware';
import { auditRecorder } from './http/audit-recorder';
import { auditWriter } from './http/audit-writer';
import { requestIds } from './http/request-id';
import type { AuditNaming } from './access/audit-actions';
import { requestGate } from './http/gate';
import { apiRouteLookup, bodyTypesOf } from './http/route-lookup';
import { identifier } from './http/identify';
import { accessRoutes } from './modules/access/access.routes';
import { auditRoutes } from './modules/access/audit.routes';
import { workspaceRoutes } from './modules/access/workspaces.routes';
import { securityHeaders } from './http/security-headers';
import { trustedOrigins } from './http/trusted-origins';
import { buildOpenApiDocument, createOpenApiRegistry } from './http/openapi';
import { mountDocsPage } from './http/docs-page';
import { fallbackMiddleware } from './http/fallback';
import type { MountableRoute } from './http/route';
import { valueBody } from './http/value-body';
import type { Logger } from './logger';
import { envMgmtRoutes } from './modules/env-mgmt/env-mgmt.routes';
import { usageRoutes } from './modules/usage/usage.routes';
import { limitsRoutes } from './modules/usage/limits.routes';
import { budgetRoutes } from './modules/usage/budget.routes';
import { mcpPublishRoutes } from './modules/mcp/mcp-publish.routes';
import { mcpRoutes } from './modules/mcp/mcp.routes';
import { googleTokenRoutes } from './modules/env-mgmt/google-token.routes';
import { datasetRoutes } from './modules/datasets/datasets.routes';
import { outputFileRoutes } from './modules/output-files/output-files.routes';
import { fileRoutes } from './modules/files/files.routes';
import { templateRoutes } from './modules/templates/templates.routes';
import { codeConvertRoutes } from './modules/code-convert/code-convert.routes';
import { aiRoutes } from './modules/ai/ai.routes';
import { evalRoutes } from './modules/evals/evals.routes';
import { type HealthProbe, healthRoutes } from './modules/health/health.routes';
import { nodeTypeRoutes } from './modules/node-types/node-types.routes';
import { pauseRoutes } from './modules/pauses/pauses.routes';
import { ragRoutes } from './modules/rag/rag.routes';
import { runRoutes } from './modules/runs/runs.routes';
import { retentionRoutes } from './modules/runs/retention.routes';
import { callbackRoutes } from './modules/callbacks/callbacks.routes';
import { inboundCallbackRoutes } from './modules/inbound-callbacks/inbound-callbacks.routes';
import { runEventRoutes } from './modules/runs/run-events.routes';
import { streamClientOf } from './modules/runs/stream-slots';
import { rerunRoutes } from './modules/runs/rerun.routes';
import { workflowPauseRoutes } from './modules/workflows/workflow-pause.routes';
import { runActionRoutes } from './modules/run-actions/run-actions.routes';
import { workflowRoutes } from './modules/workflows/workflows.routes';
import { webhookRoutes } from './modules/webhooks/webhooks.routes';
import { sessionRoutes } from './modules/sessions/sessions.routes';
import { userRoutes } from './modules/users/users.routes';
import { chatCompletionRoutes } from './modules/openai-compat/chat-completions.routes';
import type { Services } from './services';
import { mountLogin } from './web-ui/login.routes';
import { createOidcClient } from './access/oidc-client';
import { OIDC_CALLBACK, OIDC_START, mountOidcSignIn, oidcSignInLink } from './web-ui/oidc.routes';
import { APPROVE_PREFIX, mountApprovalRoutes } from './modules/pauses/approval.routes';
import { loadWebUiExport, webUiMiddleware, webUiPathKind } from './web-ui/static-site';
import { consoleMiddleware, consolePathKind, isConsolePath, loadConsole } from './web-ui/console-site';

const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE']);
const clientGone = (err: unknown) =>
  typeof err === 'object' && err !== null && 'code' in err && CLIENT_GONE.has(String(err.code));

export const API_PREFIX = '/api';

export interface AppDeps {
  config: Pick<Config, 'http' | 'webUi' | 'limits' | 'oidc' | 'outbound'>;
  /** Keys browser session ids (the server's secret key, so every replica accepts them). */
  secretKey?: Buffer;
  logger: Logger;
  services: Services;
  probes: Record<string, HealthProbe>;
}

/** Builds the Koa app without listening: processes/api.ts listens, tests may use `app.callback()`. */
export function createApp({ config, logger, services, probes, secretKey = randomBytes(32) }: AppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  // Case-sensitive, as the gate compares paths: `/API/wf/` is no route. The trailing slash stays
  // optional (the default), so PySpur's `/api/health/` is `/api/health`, as the allowlist says.
  const api = new Router({ prefix: API_PREFIX, sensitive: true });
  const registry = createOpenApiRegistry();
  const audit = auditWriter(services.auditTrail, logger);
  const routes: MountableRoute[] = [
    ...healthRoutes({ ...probes, audit_trail: audit.probe }),
    ...nodeTypeRoutes(),
    ...pauseRoutes(services.pauses, services.idempotency),
    ...workflowRoutes({
      ...services,
      uploadLimits: { maxFiles: config.http.maxUploadFiles, maxFileBytes: config.http.maxUploadBytes },
      definitionLimits: config.limits,
      dependents: [
        services.schedules,
        services.webhookTriggers,
        services.budgets,
        services.mcpTools,
        services.workflowPauses,
      ],
    }),
    ...workflowPauseRoutes(services.workflowPauses),
    ...runRoutes({
      clientRuns: services.clientRuns,
      partialRuns: services.partialRuns,
      recordBatch: services.recordBatch,
      reader: services.runs,
      idempotency: services.idempotency,
      recoverRun: services.recoverRun,
    }),
    ...retentionRoutes({
      workflows: services.workflows,
      retention: services.retention,
      eraser: services.eraser,
    }),
    ...callbackRoutes(services.callbacks),
    ...inboundCallbackRoutes(services.deliverCallback),
    ...scheduleRoutes(services.schedules),
    ...webhookRoutes({ triggers: services.webhookTriggers, deliver: services.deliverHook }),
    ...runEventRoutes({
      hub: services.runEvents,
      events: services.runRecords.events,
      runOf: (id) => services.runs.get(id),
      slots: services.streamSlots,
      clientOf: streamClientOf(clientAddressOf(config.http.login.trustForwardedFor)),
    }),
    ...rerunRoutes(services.reruns),
    ...runActionRoutes(services.runActions),
    ...fileRoutes(services.storedFiles),
    ...templateRoutes(services.workflows),
    ...codeConvertRoutes(services.codeConvert),
    ...aiRoutes(services.aiAssist),
    ...evalRoutes(services.evalSuites, services.evals, services.suitesFromRuns),
    // Before env-mgmt's `/env-mgmt/{name}`, which would take `/env-mgmt/embedding-models/` for a name.
    ...ragRoutes(services.rag, { maxFiles: config.http.maxUploadFiles, maxFileBytes: config.http.maxUploadBytes }),
    ...envMgmtRoutes(services.env),
    ...googleTokenRoutes(services.env),
    ...datasetRoutes(services.datasets),
    ...outputFileRoutes(services.outputFiles),
    ...userRoutes(services.users),
    ...sessionRoutes(services.sessions),
    ...chatCompletionRoutes(services.chatCompletions),
    ...usageRoutes(services.prices, services.usageLedger),
    ...limitsRoutes(services.providerLimits, services.notifyLimitChanges, services.switchBreaker),
    ...budgetRoutes(services.budgets, services.workflows.exists),
    ...mcpPublishRoutes(services.mcpTools, services.workflows),
    ...mcpRoutes(services.workflowTools, config.http.maxJsonBytes),
    ...accessRoutes(services.access),
    ...auditRoutes(services.auditTrail),
    ...workspaceRoutes(services.workspaces),
  ];
  const limits = { maxJsonBytes: config.http.maxJsonBytes, valueBody: valueBody(services.values) };
  for (const route of routes) route.mount(api, registry, limits);

  // Built on the first request, not at start: about 0.2 CPU-s that most processes never need.
  let openApiDocument: ReturnType<typeof buildOpenApiDocument> | undefined;
  api.get('/openapi.json', (ctx) => {
    openApiDocument ??= buildOpenApiDocument(registry, API_PREFIX);
    ctx.body = openApiDocument;
  });
  mountDocsPage(api, `${API_PREFIX}/openapi.json`);

  const digests = parseKeyHashes(config.http.apiKeyHashes);
  // Whether requests need a key or a signed-in user (else a keyless loopback instance, acting as `local`).
  const keysSet = config.http.signInRequired;
  const sessions = browserSessions(secretKey, digests, config.http.sessionTtlMs, services.browserSessionStore);
  const ui = loadWebUiExport(config.webUi);
  const consoleBundle = loadConsole(config.webUi.consoleDir);
  const isApi = (path: string) => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
  const oidc = config.oidc;
  const signInPaths = oidc ? [OIDC_START, OIDC_CALLBACK] : [];
  const loginRoute = (path: string) => path === '/login' || path === '/logout' || signInPaths.includes(path);
  const approvalRoute = (path: string) => path.startsWith(APPROVE_PREFIX);
  const routeOf = apiRouteLookup(api, routes, API_PREFIX);
  const identify = identifier({
    digests,
    open: !keysSet,
    sessions,
    users: services.accessUsers,
    keys: services.accessKeys,
    members: services.workspaceMembers,
  });
  const clientAddress = clientAddressOf(config.http.login.trustForwardedFor);
  /** The requests outside the API the audit trail records; a handler's note names them further. */
  const siteAudit = (method: string, path: string): AuditNaming | null => {
    if (method !== 'POST') return null;
    if (path === '/login') return { action: 'session.sign_in', target: { type: 'user', params: [] } };
    if (path === '/logout') return { action: 'session.sign_out', target: { type: 'session', params: [] } };
    return approvalRoute(path) ? { action: 'pause.decide', target: { type: 'pause', params: [] } } : null;
  };

  app.use(securityHeaders());
  app.use(requestIds());
  app.use(httpMetrics(isApi, routeOf));
  // Outside the error middleware and the gate: it records the status finally answered, refusals included.
  app.use(auditRecorder({ writer: audit, apiPrefix: API_PREFIX, route: routeOf, site: siteAudit, clientAddress }));
  app.use(errorMiddleware(logger));
  for (const check of requestGate({
    identify,
    route: routeOf,
    hosts: allowedHostNames({ listenHost: config.http.host, allowedHosts: config.http.allowedHosts, keysSet }),
    trustedOrigin: trustedOrigins(config.http.corsOrigins, keysSet),
    anonymous: anonymousAllowlist({
      apiPrefix: API_PREFIX,
      webUi: (path) => (isConsolePath(path) ? consolePathKind(consoleBundle, path) : webUiPathKind(ui, path)),
      signInPaths,
    }),
    bodyTypes: (method, path) =>
      loginRoute(path) || approvalRoute(path) ? [FORM_TYPE] : bodyTypesOf(routeOf(method, path)),
  }))
    app.use(check);
  // The runs a request starts record who asked for them (the ledger's api_key group, SpurStartedBy).
  // Everything a caller's request reads or writes is its workspace's; a request without a caller
  // (a webhook, an approval link) enters the workspace of what its token names.
  app.use((ctx, next) => {
    const caller = callerOf(ctx.state);
    const asCaller = () => withRunCaller({ id: callerId(ctx.state), name: caller ? starterName(caller) : null }, next);
    return caller ? workspaceScope.run(caller.workspaceId, asCaller) : asCaller();
  });
  const site = new Router({ sensitive: true });
  mountLogin(site, {
    digests,
    open: !keysSet,
    sessions,
    identify,
    users: services.accessUsers,
    keys: services.accessKeys,
    links: oidc ? [oidcSignInLink(oidc)] : [],
    attempts: loginAttempts(config.http.login),
    clientAddress,
  });
  if (oidc)
    mountOidcSignIn(site, {
      settings: oidc,
      client: createOidcClient(oidc, config.outbound),
      store: services.oidcSignIns,
      users: services.accessUsers,
      sessions,
      secretKey,
      starts: loginAttempts(config.http.login),
      clientAddress,
      logger,
    });
  mountApprovalRoutes(site, services.approvalLinks);
  app.use(site.routes());
  app.use(consoleMiddleware(consoleBundle));
  app.use(
    webUiMiddleware(ui, {
      reserved: (path) => isApi(path) || loginRoute(path) || approvalRoute(path) || isConsolePath(path),
    }),
  );
  app.use(api.routes());
  app.use(fallbackMiddleware(api));
  app.on('error', (err: unknown) => {
    // A client that leaves an event stream or drops its connection ends the answer early: routine,
    // not a fault of the api's.
    if (clientGone(err)) logger.debug({ err }, 'client left');
    else logger.error({ err }, 'unhandled error in koa');
  });
  return app;
}
