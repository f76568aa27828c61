import type { WorkflowDefinition, WorkflowLink, WorkflowNode } from '../../definitions/definition.schema';
import { pyString, pyValue } from './python-literal';

export interface CodeOptions {
  name: string;
  description: string;
  /** Write each node's coordinates (else the builder lays the nodes out). */
  coordinates: boolean;
  /** Write each node's dimensions. */
  dimensions: boolean;
}

/** Python's keywords and the names the generated code itself uses: never a node's variable. */
const TAKEN = new Set([
  ...'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
  'builder',
  'WorkflowBuilder',
  'workflow_def',
]);

/**
 * A definition as PySpur-style workflow code: a `WorkflowBuilder` that adds each node, link and test
 * input, then builds. Every value the user wrote is a literal (python-literal.ts) and nothing the
 * user wrote reaches a comment or a name unsanitised, so running the code builds this definition
 * and nothing else.
 */
export function definitionToCode(def: WorkflowDefinition, options: CodeOptions): string {
  const vars = variableNames(def.nodes);
  const lines = [
    'from pyspur.workflow_builder import WorkflowBuilder',
    '',
    '# Create a workflow builder',
    `builder = WorkflowBuilder(${pyString(options.name)}, ${pyString(options.description)})`,
    '',
    '# Set the workflow type',
    `builder.set_spur_type(${pyString(def.spur_type)})`,
    '',
    '# Add nodes',
  ];
  for (const node of def.nodes) lines.push(...nodeLines(node, vars.get(node.id) as string, options), '');
  if (def.links.length > 0) {
    lines.push('# Add links between nodes');
    for (const link of def.links) lines.push(linkLine(link, vars));
    lines.push('');
  }
  if (def.test_inputs.length > 0) {
    lines.push('# Add test inputs');
    for (const input of def.test_inputs) lines.push(`builder.add_test_input(${pyValue(input)})`);
    lines.push('');
  }
  lines.push('# Build the workflow definition', 'workflow_def = builder.build()', '');
  return lines.join('\n');
}

function nodeLines(node: WorkflowNode, variable: string, options: CodeOptions): string[] {
  const args = [
    `node_type=${pyString(node.node_type)}`,
    `config=${pyValue(node.config, 1)}`,
    `id=${pyString(node.id)}`,
  ];
  if (node.title !== node.id) args.push(`title=${pyString(node.title)}`);
  if (node.parent_id !== null) args.push(`parent_id=${pyString(node.parent_id)}`);
  if (options.coordinates)
    args.push(
      node.coordinates
        ? `coordinates=(${pyValue(node.coordinates.x)}, ${pyValue(node.coordinates.y)})`
        : // An unplaced node stays unplaced (left out, the builder would place it).
          'coordinates=None',
    );
  if (options.dimensions && node.dimensions)
    args.push(`dimensions=(${pyValue(node.dimensions.width)}, ${pyValue(node.dimensions.height)})`);
  if (node.subworkflow) args.push(`subworkflow=${pyValue(node.subworkflow, 1)}`);
  return [`${variable} = builder.add_node(`, ...args.map((arg) => `    ${arg},`), ')'];
}

function linkLine(link: WorkflowLink, vars: ReadonlyMap<string, string>): string {
  const end = (id: string) => vars.get(id) ?? pyString(id);
  if (link.source_handle === null && link.target_handle === null)
    return `builder.add_link(${end(link.source_id)}, ${end(link.target_id)})`;
  const args = [`source_id=${end(link.source_id)}`, `target_id=${end(link.target_id)}`];
  if (link.source_handle !== null) args.push(`source_handle=${pyString(link.source_handle)}`);
  if (link.target_handle !== null) args.push(`target_handle=${pyString(link.target_handle)}`);
  return `builder.add_link(${args.join(', ')})`;
}

/** One ASCII identifier per node, from its id as PySpur makes them, never a keyword, a dunder or a name taken before. */
function variableNames(nodes: readonly WorkflowNode[]): Map<string, string> {
  const used = new Set<string>();
  const names = new Map<string, string>();
  for (const node of nodes) {
    if (names.has(node.id)) continue;
    let base = node.id.replace(/[^A-Za-z0-9_]/g, '_');
    if (!/^[A-Za-z_]/.test(base)) base = `node_${base}`;
    if (TAKEN.has(base) || base.startsWith('__')) base = `node_${base}`;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    names.set(node.id, name);
  }
  return names;
}
