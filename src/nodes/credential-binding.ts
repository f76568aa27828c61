/**
 * A credential variable bound to the base URL setting it is sent under (MCP servers' keys, the
 * HTTP request node's). No imports: credential-bases.ts reads these lists when it loads.
 */
export interface CredentialBinding {
  variable: string;
  base: string;
}

/** Each binding's variable → its base setting, as KEY_BASES records them (credential-bases.ts). */
export function keyBasesOf(bindings: readonly CredentialBinding[]): Readonly<Record<string, readonly string[]>> {
  return Object.fromEntries(bindings.map((c) => [c.variable, [c.base]]));
}

/**
 * The three numbered credentials of a family of nodes that call URLs their workflows choose
 * (`MCP_API_KEY` under `MCP_API_BASE`, `_2`, `_3`): one mechanism for every such family.
 */
export function numberedCredentials<P extends string>(prefix: P) {
  const bindings = [
    { variable: `${prefix}_API_KEY`, base: `${prefix}_API_BASE` },
    { variable: `${prefix}_API_KEY_2`, base: `${prefix}_API_BASE_2` },
    { variable: `${prefix}_API_KEY_3`, base: `${prefix}_API_BASE_3` },
  ] as const;
  type Variable = (typeof bindings)[number]['variable'];
  const variables = bindings.map((c) => c.variable) as [Variable, ...Variable[]];
  return { bindings, variables, keyBases: keyBasesOf(bindings) };
}
