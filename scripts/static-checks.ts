// Type check and lint over one TypeScript program: `tsc --noEmit` and ESLint's type-aware rules
// (no-floating-promises) would each build the same program from tsconfig.json, which is most of
// their time. Exit code 1 when either found a problem; both report in full.
// Usage: npx tsx scripts/static-checks.ts (`npm test` runs it beside the suite).
import path from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { REPO_ROOT } from './lib/tools';

/** A project's program, as `tsc -p <config>` builds it: the server's (tsconfig.json) or the console's. */
function projectProgram(configPath = path.join(REPO_ROOT, 'tsconfig.json')): ts.Program {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  return ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
  });
}

function typeCheck(program: ts.Program): boolean {
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length === 0) return true;
  const host: ts.FormatDiagnosticsHost = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => REPO_ROOT,
    getNewLine: () => '\n',
  };
  console.error(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  console.error(`static checks: ${diagnostics.length} type error(s)`);
  return false;
}

async function lint(program: ts.Program): Promise<boolean> {
  // The config's own settings, with the program handed over instead of the project service.
  const eslint = new ESLint({
    cwd: REPO_ROOT,
    overrideConfig: { languageOptions: { parserOptions: { projectService: false, programs: [program] } } },
  });
  const results = await eslint.lintFiles(['.']);
  const problems = results.reduce((n, r) => n + r.errorCount + r.warningCount, 0);
  if (problems === 0) return true;
  const formatter = await eslint.loadFormatter('stylish');
  console.error(await formatter.format(results));
  return false;
}

async function main(): Promise<number> {
  const program = projectProgram();
  const types = typeCheck(program);
  // The console (a browser program: DOM, JSX) is checked as its own project.
  const consoleTypes = typeCheck(projectProgram(path.join(REPO_ROOT, 'console', 'tsconfig.json')));
  const linted = await lint(program);
  return types && consoleTypes && linted ? 0 : 1;
}

if (require.main === module) {
  void main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
