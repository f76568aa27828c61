import type { SpurTemplate } from '../template';
import { agentTools } from './agent-tools';
import { approvalFlow } from './approval-flow';
import { batchSummary } from './batch-summary';
import { chatbotMemory } from './chatbot-memory';
import { dataCleaning } from './data-cleaning';
import { ragAnswer } from './rag-answer';

/** Spur's templates, in the order the dashboard shows them. */
export const TEMPLATES: readonly SpurTemplate[] = [
  approvalFlow,
  batchSummary,
  chatbotMemory,
  agentTools,
  ragAnswer,
  dataCleaning,
];
