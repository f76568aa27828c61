/**
 * The script a pool thread starts with, from an inline script because a worker cannot be started
 * from a .ts file: compiled JavaScript (dist/) is required as it is, TypeScript sources the way
 * this process runs them (tsx).
 */
export function threadBoot(module: string): string {
  if (!module.endsWith('.ts')) return `require(${JSON.stringify(module)});`;
  return `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();\nrequire(${JSON.stringify(module)});`;
}
