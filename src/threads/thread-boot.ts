/**
 * The script a pool thread starts with: it runs the TypeScript sources the way this process does
 * (tsx), from an inline script because a worker cannot be started from a .ts file.
 */
export function threadBoot(module: string): string {
  return `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();\nrequire(${JSON.stringify(module)});`;
}
