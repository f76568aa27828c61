// The dotted-path rule is shared with the workflow (ForLoopNode input_map), so it lives in
// src/engine, which both the nodes and the deterministic workflow code may import.
export { type PathLookup, valueAtPath } from '../engine/paths';
