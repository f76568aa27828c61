import type { z } from 'zod';
import { fromJsonText } from '../../db/json-text';
import type { DefinitionLimits } from '../../config/settings';
import type { WorkflowDefinition } from '../../definitions/definition.schema';
import { BadRequestError } from '../../errors';
import { type WorkflowCreateInput, workflowCreateRequest } from '../workflows/workflows.schemas';
import type { WorkflowService } from '../workflows/workflows.service';
import { type RunWorkflowCode, WorkflowCodeError } from './code-parser';
import { type CodeLayout, SandboxAnswer } from './code-convert.schemas';
import { definitionToCode } from './workflow-code';

export interface CodeConvertDeps {
  workflows: WorkflowService;
  runWorkflowCode: RunWorkflowCode;
  /** Definitions over the installation's limits are refused, as on any save. */
  definitionLimits: DefinitionLimits;
}

interface ParsedWorkflow {
  request: WorkflowCreateInput & { definition: WorkflowDefinition };
  /** Nodes the code gave no coordinates. */
  placed: ReadonlySet<string>;
}

/** PySpur's workflow-as-code: definitions written out as builder code, and such code read back. */
export function createCodeConvertService({ workflows, runWorkflowCode, definitionLimits }: CodeConvertDeps) {
  const createRequest = workflowCreateRequest(definitionLimits);

  /** Runs the code in a worker's sandbox and checks what it built as a workflow's create request. */
  async function parse(code: string | null): Promise<ParsedWorkflow> {
    if (!code) throw new BadRequestError('Code is required');
    const answer = SandboxAnswer.safeParse(await runWorkflowCode(code));
    if (!answer.success) throw new WorkflowCodeError(`the code's answer is not a workflow: ${issues(answer.error)}`);
    const { name, description, definition, placed } = answer.data;
    const request = createRequest.safeParse({ name, description: description ?? '', definition });
    if (!request.success) throw new WorkflowCodeError(`the workflow it builds is not valid: ${issues(request.error)}`);
    return {
      request: request.data as ParsedWorkflow['request'],
      placed: new Set(placed),
    };
  }

  async function storedDefinition(id: string): Promise<WorkflowDefinition> {
    return fromJsonText<WorkflowDefinition>((await workflows.load(id)).definition) as WorkflowDefinition;
  }

  return {
    async codeOf(id: string, layout: CodeLayout): Promise<string> {
      const doc = await workflows.load(id);
      const definition = fromJsonText<WorkflowDefinition>(doc.definition) as WorkflowDefinition;
      return definitionToCode(definition, { name: doc.name, description: doc.description ?? '', ...options(layout) });
    },
    definitionCode(definition: WorkflowDefinition, layout: CodeLayout): string {
      return definitionToCode(definition, { name: 'Workflow', description: '', ...options(layout) });
    },
    /** Not stored; with a stored workflow's id, its layout fills in what the code left out. */
    async toDefinition(code: string | null, workflowId: string | null): Promise<WorkflowDefinition> {
      const parsed = await parse(code);
      const existing = workflowId && (await workflows.exists(workflowId)) ? await storedDefinition(workflowId) : null;
      return existing ? keepLayout(parsed, existing) : parsed.request.definition;
    },
    async create(code: string | null) {
      const parsed = await parse(code);
      return workflows.create(parsed.request);
    },
    /** Code first, as PySpur checks (400 before 404); the stored layout fills in what the code left out. */
    async update(id: string, code: string | null) {
      if (!code) throw new BadRequestError('Code is required');
      const existing = await storedDefinition(id);
      const parsed = await parse(code);
      return workflows.update(id, { ...parsed.request, definition: keepLayout(parsed, existing) });
    },
  };
}

function options(layout: CodeLayout) {
  return { coordinates: layout.preserve_coordinates, dimensions: layout.preserve_dimensions };
}

/**
 * PySpur keeps a stored node's place and size when code rewrites its workflow: a node the code
 * placed by itself goes where the editor had it, and one without dimensions keeps the stored ones.
 */
function keepLayout(parsed: ParsedWorkflow, existing: WorkflowDefinition): WorkflowDefinition {
  const before = new Map(existing.nodes.map((node) => [node.id, node]));
  const nodes = parsed.request.definition.nodes.map((node) => {
    const old = before.get(node.id);
    if (!old) return node;
    return {
      ...node,
      coordinates: parsed.placed.has(node.id) && old.coordinates ? old.coordinates : node.coordinates,
      dimensions: node.dimensions ?? old.dimensions,
    };
  });
  return { ...parsed.request.definition, nodes };
}

function issues(error: z.ZodError): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => `${issue.path.join('.') || '(top)'}: ${issue.message}`)
    .join('; ');
}

export type CodeConvertService = ReturnType<typeof createCodeConvertService>;
