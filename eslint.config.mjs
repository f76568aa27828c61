// Lint as an architecture guard (STYLE.md): workflow code stays deterministic, promises are awaited,
// and the api never reaches into the worker's code.
import eslintPluginPrettierRecommended from 'eslint-plugin-prettier/recommended';
import tseslint from 'typescript-eslint';

// no-restricted-syntax, not no-restricted-imports: the floors own that rule for their folders.
// node:net's address helpers (isIP) are pure and allowed; its sockets are not.
const NETWORK_SYNTAX = [
  "ImportDeclaration[importKind!='type'][source.value=/^(node:)?(https?|tls|dgram|dns(\\/promises)?)$|^undici$/]",
  "ImportDeclaration[importKind!='type'][source.value=/^(node:)?net$/] > :matches(ImportDefaultSpecifier, ImportNamespaceSpecifier, ImportSpecifier[imported.name!=/^isIP(v4|v6)?$/])",
].map((selector) => ({
  selector,
  message:
    'Network access goes through src/outbound (the address policy); the servers themselves are src/serve-api.ts and src/metrics/metrics-server.ts.',
}));

export default tseslint.config(
  // console/ is a browser program with a project of its own (console/tsconfig.json), type-checked
  // by scripts/static-checks.ts; its bundle may hold only its own code and Preact (build-console.ts).
  {
    ignores: ['node_modules/**', '.tools/**', '.data/**', '.scratch/**', 'bench/results/**', 'dist/**', 'console/**'],
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: only the SDK, the contracts
    // (src/contracts) and the engine (pure graph code).
    files: ['temporal/workflows/**/*.ts'],
    // `import type` of the activities is how workflows type their proxies, so type imports pass.
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\./|\\.\\./\\.\\./src/(engine|contracts)/).*',
              message: 'Workflows may import only @temporalio/workflow, src/contracts and src/engine.',
              allowTypeImports: true,
            },
            {
              regex: '^\\.\\./(?!\\.\\./src/(engine|contracts)/)',
              message: 'Workflows may import only @temporalio/workflow, src/contracts and src/engine.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // Only the process entries (src/processes) load the worker's wing: workflows must stay
    // deterministic and replayable, and the api must run without a worker.
    files: ['src/**/*.ts'],
    ignores: ['src/processes/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)temporal/',
              message:
                'Only src/processes loads the worker (temporal/); what the api and the worker share lives in src/contracts or below.',
            },
          ],
        },
      ],
    },
  },
  {
    // Ground floors: the engine is pure and deterministic and imports nothing but itself;
    // storage imports nothing above it (no api modules, no nodes, no Temporal code).
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!\\./)', message: 'The engine imports nothing outside src/engine.' }] },
      ],
    },
  },
  {
    // The contracts every side shares (workflow inputs, signals, names, search attributes) stand on
    // the engine alone, so storage, the api, the worker and workflow code can all import them.
    files: ['src/contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(?!engine/)',
              message: 'Contracts import only src/engine, their own files and libraries.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/db/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)(temporal|modules|http|nodes|processes|definitions|rag|usage|evals|secrets|parsing)/',
              message:
                'Storage stands low: it may import only src/engine, src/contracts, src/config, its own files and libraries.',
            },
          ],
        },
      ],
    },
  },
  {
    // Below the api: what the api and the worker share (the run's life, definitions, secrets, nodes,
    // the knowledge base, parsing, outbound requests, health probes, prices, tracing) never reaches up into the api's
    // routes and services, so the worker can load it without loading the api.
    files: [
      'src/{contracts,runs,definitions,secrets,health,nodes,rag,parsing,outbound,threads,callbacks,approvals,usage,telemetry,evals}/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(http|modules|processes)/|(^|/)temporal/',
              message:
                'Shared code stands below the api and the worker: it never imports src/http, src/modules or the worker (temporal/).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/{errors,zod,timestamps,answered-within,config,logger}.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\./(http|modules|processes)/|(^|/)temporal/',
              message:
                'Shared code stands below the api and the worker: it never imports src/http, src/modules or the worker (temporal/).',
            },
          ],
        },
      ],
    },
  },
  {
    // The worker (its composition, workflows and activities) sits on the contracts, the engine, storage, nodes and the shared domains, never on the api or the process entries.
    files: ['temporal/**/*.ts'],
    ignores: ['temporal/workflows/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '/src/(http|modules|processes)/|/src/(app|services|serve-api)$',
              message:
                'The worker never imports the api (src/http, src/modules, the app) or the process entries: move what both sides use below both.',
            },
          ],
        },
      ],
    },
  },
  {
    // One outbound client (src/outbound) for every server-side request: a second path around its
    // address policy, redirect checks and size cap would be a way to reach internal services. The
    // servers themselves (the api's, the metrics port's) listen and never request; the metrics port
    // reads the Temporal SDK's exporter on a loopback port this process chose (sdk-metrics.ts).
    files: ['src/**/*.ts', 'temporal/**/*.ts'],
    ignores: ['src/outbound/**', 'src/serve-api.ts', 'src/metrics/metrics-server.ts', 'src/metrics/sdk-metrics.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        {
          name: 'fetch',
          message:
            'Requests go through the outbound client (ctx.fetch or an OutboundFetch from src/outbound), which applies the address policy.',
        },
      ],
      'no-restricted-syntax': ['error', ...NETWORK_SYNTAX],
    },
  },
  {
    // Workflow modules: the workflow bundle loads them once per workflow thread and every workflow
    // shares them (temporal/workflow-bundle.ts), so their module scope holds no state a workflow
    // could change: no `let` or `var`, no Map or Set but a read-only one. (The SDK freezes what they
    // export; a Map's or Set's entries it cannot freeze.)
    files: ['temporal/workflows/**/*.ts', 'src/engine/**/*.ts', 'src/contracts/**/*.ts'],
    rules: {
      // The network rule above holds here too: one rule's options are replaced, not added to.
      'no-restricted-syntax': [
        'error',
        ...NETWORK_SYNTAX,
        {
          selector: ":matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration[kind!='const']",
          message: 'Workflow modules are shared by every workflow of a worker: no module-level let or var.',
        },
        {
          selector:
            ':matches(Program, Program > ExportNamedDeclaration) > VariableDeclaration > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly(Set|Map)$/]) > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet)$/]',
          message:
            'Workflow modules are shared by every workflow of a worker: a module-level Map or Set must be typed ReadonlyMap or ReadonlySet.',
        },
      ],
    },
  },
  {
    // Tests assert on parsed JSON bodies; `any` stays inside the test helpers.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // Layout is Prettier's (.prettierrc.json): `npm run format` writes it, lint fails on a difference.
  eslintPluginPrettierRecommended,
);
