// The dotted-path rule is shared with the workflow (ForLoopNode input_map), so it lives in
// temporal/shared, which both the nodes and the deterministic workflow code may import.
export { type PathLookup, valueAtPath } from '../../temporal/shared/paths';
