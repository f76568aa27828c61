import { TransientNodeError } from '../nodes/errors';
import type { ModelCallUsage, NodeExecutionContext } from '../nodes/types';
import type { PriceBook } from '../usage/price-book';
import { type RunTrace, runSpanId } from '../contracts/trace-ids';
import type { SpanOutcome, SpurSpan, SpurTracer } from './tracer';

/** One attempt of one node (or of an agent's model call) in a traced run. */
export interface NodeAttempt {
  runId: string;
  trace: RunTrace;
  node: { id: string; title: string; node_type: string };
  /** Temporal's attempt number (1 on the first): a retry is a span of its own, never a lost one. */
  attempt: number;
  name: string;
  attributes?: Record<string, string | number | boolean>;
}

/** What a node's body may do with its span: trace the model calls its context makes. */
export interface NodeSpan {
  traceModelCalls(ctx: NodeExecutionContext, prices: PriceBook): void;
}

const NANO = 1e9;

/**
 * Runs `body` in a span of the node's attempt, a child of the run span (named by its derived id,
 * whichever process exports it), ended with the attempt's outcome. Without a tracer or a trace
 * (tracing off, a batch row run inside its chunk) the body runs untraced.
 */
export async function inNodeSpan<T>(
  tracer: SpurTracer | undefined,
  attempt: NodeAttempt | null,
  body: (span: NodeSpan | undefined) => Promise<T>,
): Promise<T> {
  if (!tracer || !attempt) return body(undefined);
  const span = tracer.start({
    name: attempt.name,
    traceId: attempt.trace.traceId,
    parentSpanId: runSpanId(attempt.runId),
    attributes: {
      'spur.run.id': attempt.runId,
      'spur.node.id': attempt.node.id,
      'spur.node.title': attempt.node.title,
      'spur.node.type': attempt.node.node_type,
      'spur.attempt': attempt.attempt,
      ...attempt.attributes,
    },
  });
  const calls = modelCalls(span);
  try {
    const result = await body(calls);
    await calls.settle({ status: 'error', message: 'The model request did not complete' });
    span.setAttributes({ 'spur.node.status': 'COMPLETED' });
    span.end({ status: 'ok' });
    return result;
  } catch (err) {
    const failure = failureOf(err);
    await calls.settle(failure);
    span.setAttributes({ 'spur.node.status': 'FAILED', ...errorType(err) });
    span.end(failure);
    throw err;
  }
}

/** Model call spans under a node span; a call still open when the attempt ends ends with it. */
function modelCalls(node: SpurSpan): NodeSpan & { settle(outcome: SpanOutcome): Promise<void> } {
  const open = new Set<SpurSpan>();
  const priced: Promise<void>[] = [];
  let prices: PriceBook | undefined;
  return {
    traceModelCalls(ctx, book) {
      prices = book;
      ctx.traceModelCall = (model) => {
        const { system, name } = genAiModel(model);
        const span = node.child(`chat ${name}`, {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': system,
          'gen_ai.request.model': name,
        });
        open.add(span);
        return {
          end: (usage) => {
            if (!open.delete(span)) return;
            priced.push(endModelSpan(span, model, usage, prices));
          },
        };
      };
    },
    async settle(outcome) {
      for (const span of open) span.end(outcome);
      open.clear();
      await Promise.allSettled(priced);
    },
  };
}

/** Tokens from the reply, cost from the price book (none when the model has no price). */
async function endModelSpan(
  span: SpurSpan,
  model: string,
  usage: ModelCallUsage | undefined,
  prices: PriceBook | undefined,
): Promise<void> {
  const endTime = Date.now();
  if (usage) {
    span.setAttributes({
      'gen_ai.usage.input_tokens': usage.prompt_tokens,
      'gen_ai.usage.output_tokens': usage.completion_tokens,
    });
    // The span is only a view: a price book that cannot answer (its database away) costs it the attribute.
    const [priced] = prices ? await prices.price([{ model, ...usage }]).catch(() => []) : [];
    if (priced && priced.cost_nano_usd !== null) span.setAttributes({ 'spur.cost_usd': priced.cost_nano_usd / NANO });
  }
  span.end({ status: 'ok' }, endTime);
}

/** OpenTelemetry's `gen_ai.system` names for Spur's providers (a `provider/model` id). */
const GEN_AI_SYSTEMS: Record<string, string> = {
  openai: 'openai',
  azure: 'az.ai.openai',
  anthropic: 'anthropic',
  gemini: 'gcp.gemini',
  deepseek: 'deepseek',
  xai: 'xai',
  ollama: 'ollama',
};

function genAiModel(model: string): { system: string; name: string } {
  const slash = model.indexOf('/');
  const provider = slash > 0 ? model.slice(0, slash) : '';
  return { system: GEN_AI_SYSTEMS[provider] ?? (provider || 'unknown'), name: model.slice(slash + 1) };
}

/**
 * A failure as a span shows it. Only a provider's or the network's failure (a transient one) is
 * described in its own words, which name the provider and its status: a node's own error may
 * quote what it read or what a model wrote (a reply that is not JSON, a template's text, a
 * traceback), and traces never carry prompts or replies. The task keeps the whole message.
 */
function failureOf(err: unknown): SpanOutcome {
  // By its type's name: the node's error reaches here as the ApplicationFailure the activity made of it.
  const type = errorType(err)['error.type'] ?? 'error';
  if (type === TransientNodeError.name && err instanceof Error) return { status: 'error', message: err.message };
  return { status: 'error', message: `The node failed (${type}): its error is on the run's task` };
}

/** The failure's type (Temporal's ApplicationFailure type, else the error's name): `error.type`. */
function errorType(err: unknown): Record<string, string> {
  const type = (err as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && type) return { 'error.type': type };
  return err instanceof Error ? { 'error.type': err.name } : {};
}
