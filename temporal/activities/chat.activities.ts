import type { Models } from '../../src/db/models';
import { createSessionTurns } from '../../src/db/session-turns';
import type { ChatTurnAppend } from '../../src/contracts/run-contract';

/** Chat memory writes: a completed chatbot run's turn, stored once however often it is retried. */
export function createChatActivities(models: Models) {
  const turns = createSessionTurns(models);
  return {
    async appendChatTurn(turn: ChatTurnAppend): Promise<void> {
      await turns.appendTurn(turn);
    },
  };
}
